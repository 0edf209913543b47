// The translation unit NVRTC compiles for one user model (kernels/backend/cuda/jit/
// nvrtc_compiler.hpp): the model's segments as code (codegen.hpp) in UserModel<K, Segments>,
// which takes the model's own sizes (K, its bucket, only names it), and the fused kernel of
// kernels/backend/cuda/system_kernel.cuh over it, for one precision, method and kGeneral
// option: the kernel nvcc builds for a built-in model.
//
// Host code builds FusedSystem<UserModel<K>, T, method, general> (the interpreter's) and
// passes its bytes to this kernel: FusedSystem's members (batch views and settings) do not
// depend on the model type, and the source asserts that both have one size and alignment.
#pragma once

#include <cstddef>
#include <string>

#include "kernels/ensemble/batch_layout.hpp"
#include "kernels/models/user/user_model.hpp"

namespace ukes::jit {

struct FusedKernelSpec {
  int bucket = 0;  // UserModel<bucket>
  bool fp64 = true;
  Method method = Method::kRk4;
  bool general = false;  // FusedSystem's kGeneral: step projection and control compiled in
  std::size_t host_size = 0, host_align = 0;  // the interpreter's FusedSystem, as the host has it
};

struct FusedSource {
  std::string text;             // the translation unit
  std::string name_expression;  // the kernel, for nvrtcAddNameExpression
};

FusedSource fused_source(const UserModelProgram& program, const FusedKernelSpec& spec);

}  // namespace ukes::jit
