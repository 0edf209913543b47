#include "kernels/backend/cuda/jit/fused_source.hpp"

#include <stdexcept>

#include "kernels/backend/cuda/jit/codegen.hpp"
#include "kernels/models/catalogue.hpp"

namespace ukes::jit {
namespace {

struct BuiltIn {
  const char* name;  // its kName, and its header's name under kernels/models/
  const char* type;  // in ukes::models
};

#define UKES_JIT_BUILT_IN(header, type) {#header, #type},
constexpr BuiltIn kBuiltIns[] = {UKES_CATALOGUE(UKES_JIT_BUILT_IN)};
#undef UKES_JIT_BUILT_IN

// The model's type and what declares it, as the translation unit's text.
struct ModelText {
  std::string type;
  std::string declaration;
};

ModelText model_text(const UserModelProgram* program, const FusedKernelSpec& spec) {
  if (spec.bucket > 0) {
    if (program == nullptr) throw std::invalid_argument("a user model's kernel needs its program");
    return {"ukes::UserModel<" + std::to_string(spec.bucket) + ", ukes::jit::Segments>",
            "#include \"kernels/models/user/user_model.hpp\"\n\nnamespace ukes::jit {\n" +
                expr::generated_segments(*program, "Segments") + "}  // namespace ukes::jit\n"};
  }
  for (const BuiltIn& built_in : kBuiltIns)
    if (spec.model == built_in.name)
      return {std::string("ukes::models::") + built_in.type,
              std::string("#include \"kernels/models/") + built_in.name + ".hpp\"\n"};
  throw std::invalid_argument("no built-in model of that name has a kernel to compile");
}

}  // namespace

FusedSource fused_source(const UserModelProgram* program, const FusedKernelSpec& spec) {
  const ModelText model = model_text(program, spec);
  const std::string system =
      "ukes::FusedSystem<" + model.type + ", " + (spec.fp64 ? "double" : "float") +
      ", (ukes::Method)" + std::to_string(static_cast<int>(spec.method)) + ", " +
      (spec.general ? "true" : "false") + ", " + (spec.servo_derivatives ? "true" : "false") +
      ", " + (spec.events ? "true" : "false") + ">";
  FusedSource source;
  source.text =
      std::string(
          "#include \"kernels/backend/cuda/system_kernel.cuh\"\n"
          "#include \"kernels/backend/device/system_kernels.hpp\"\n") +
      (spec.servo_derivatives ? "#include \"kernels/uk/servo_derivatives.hpp\"\n" : "") +
      (spec.method == Method::kRosenbrock ? "#include \"kernels/ensemble/stiff_system.hpp\"\n"
                                          : "") +
      model.declaration + "\n" + "static_assert(sizeof(" + system +
      ") == " + std::to_string(spec.host_size) + ");\n" + "static_assert(alignof(" + system +
      ") == " + std::to_string(spec.host_align) + ");\n";
  source.name_expression = "ukes::cuda::system_kernel<" + system + ">";
  return source;
}

}  // namespace ukes::jit
