#include "kernels/backend/cuda/jit/fused_source.hpp"

#include "kernels/backend/cuda/jit/codegen.hpp"

namespace ukes::jit {

FusedSource fused_source(const UserModelProgram& program, const FusedKernelSpec& spec) {
  const std::string system = "ukes::FusedSystem<ukes::UserModel<" + std::to_string(spec.bucket) +
                             ", ukes::jit::Segments>, " + (spec.fp64 ? "double" : "float") +
                             ", (ukes::Method)" + std::to_string(static_cast<int>(spec.method)) +
                             ", " + (spec.general ? "true" : "false") + ">";
  FusedSource source;
  source.text =
      "#include \"kernels/backend/cuda/system_kernel.cuh\"\n"
      "#include \"kernels/backend/device/system_kernels.hpp\"\n"
      "#include \"kernels/models/user/user_model.hpp\"\n\n"
      "namespace ukes::jit {\n" +
      expr::generated_segments(program, "Segments") + "}  // namespace ukes::jit\n\n" +
      "static_assert(sizeof(" + system + ") == " + std::to_string(spec.host_size) + ");\n" +
      "static_assert(alignof(" + system + ") == " + std::to_string(spec.host_align) + ");\n";
  source.name_expression = "ukes::cuda::system_kernel<" + system + ">";
  return source;
}

}  // namespace ukes::jit
