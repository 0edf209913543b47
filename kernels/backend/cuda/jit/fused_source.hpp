// The translation unit NVRTC compiles for one model (kernels/backend/cuda/jit/nvrtc_compiler.hpp):
// the fused kernel of kernels/backend/cuda/system_kernel.cuh over it, for one precision, method
// and set of options, the kernel nvcc builds for a built-in model. A user model's segments are
// written as code (codegen.hpp) in UserModel<K, Segments>, which takes the model's own sizes (K,
// its bucket, only names it); a built-in is included by its header (kernels/models/catalogue.hpp),
// for the kernels the module has no ahead-of-time code for (servo derivatives and the stiff
// method, kernels/backend/device/system_kernels.hpp).
//
// Host code builds FusedSystem<UserModel<K>, T, ...> (the interpreter's) or FusedSystem<Model, T,
// ...> and passes its bytes to this kernel: FusedSystem's members (batch views and settings) do
// not depend on the model type, and the source asserts that both have one size and alignment.
#pragma once

#include <cstddef>
#include <string>

#include "kernels/ensemble/batch_layout.hpp"
#include "kernels/models/user/user_model.hpp"

namespace ukes::jit {

struct FusedKernelSpec {
  int bucket = 0;     // UserModel<bucket> for a user model; 0 for a built-in
  std::string model;  // a built-in's name (its kName), when bucket is 0
  bool fp64 = true;
  Method method = Method::kRk4;
  bool general = false;  // FusedSystem's kGeneral: step projection and control compiled in
  bool servo_derivatives = false;             // FusedSystem's kServoDerivatives (with general)
  bool events = false;                        // FusedSystem's kEvents (with general)
  std::size_t host_size = 0, host_align = 0;  // the FusedSystem the host passes
};

struct FusedSource {
  std::string text;             // the translation unit
  std::string name_expression;  // the kernel, for nvrtcAddNameExpression
};

// Throws std::invalid_argument for a spec that names no model: a user model's without `program`,
// or a built-in not in the catalogue.
FusedSource fused_source(const UserModelProgram* program, const FusedKernelSpec& spec);

}  // namespace ukes::jit
