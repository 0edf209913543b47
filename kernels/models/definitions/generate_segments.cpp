// Build-time code generation of a built-in model's functions from its definition file
// (docs/MODEL_FORMAT.md): the definition is compiled into a program (kernels/expr/) and written
// out as code by the generator that writes a user model's kernel for NVRTC
// (kernels/backend/cuda/jit/codegen.hpp), so a built-in generated this way runs what its
// definition compiled at run time runs (kernels/models/generated_functions.hpp).
//
//   ukes_model_codegen <definition.json> <struct name> <output.hpp> [<committed.hpp>]
//
// The model headers include the committed copy in kernels/models/generated/ (no build-tree include
// path, so no translation unit's flags depend on it); every build writes the output and, given
// the committed copy, fails where the two differ (CMakeLists.txt, ukes_model_segments). The
// output is rewritten only when its text changes.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "kernels/backend/cuda/jit/codegen.hpp"
#include "kernels/models/user/definition.hpp"

namespace {

// The file's text; "" for a file that does not exist unless `required`.
std::string read(const std::string& path, bool required) {
  std::ifstream in(path);
  if (!in && required) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string file_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::cerr << "usage: ukes_model_codegen <definition.json> <struct name> <output.hpp> "
                 "[<committed.hpp>]\n";
    return 2;
  }
  try {
    const ukes::UserModelDefinition definition = ukes::parse_user_model_text(read(argv[1], true));
    // The file's name alone: the text is the same in every checkout.
    std::ostringstream out;
    out << "// Generated from client/examples/models/" << file_name(argv[1])
        << " by kernels/models/definitions/generate_segments.cpp\n"
        << "// (every build checks it: CMakeLists.txt, ukes_model_segments). Do not edit.\n"
        << "#pragma once\n\n#include \"kernels/models/user/user_model.hpp\"\n\n"
        << "namespace ukes::models::generated {\n\n"
        << ukes::expr::generated_segments(ukes::kernel_program(definition), argv[2])
        << "\n}  // namespace ukes::models::generated\n";
    const std::string text = out.str();
    if (read(argv[3], false) != text) {
      std::ofstream file(argv[3]);
      file << text;
      if (!file.good()) throw std::runtime_error(std::string("cannot write ") + argv[3]);
    }
    if (argc == 5 && read(argv[4], false) != text) {
      std::remove(argv[3]);  // so that the next build checks again
      std::cerr << argv[4] << " is not what " << file_name(argv[1])
                << " generates: run cmake --build <build> --target ukes_update_model_segments\n";
      return 1;
    }
    return 0;
  } catch (const ukes::DefinitionError& e) {
    std::cerr << argv[1] << ": " << e.path << ": " << e.reason << "\n";
  } catch (const std::exception& e) {
    std::cerr << argv[1] << ": " << e.what() << "\n";
  }
  return 1;
}
