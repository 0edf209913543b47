// A compiled model program (kernels/expr/program.hpp) as C++ source, on the host: the segments of
// a user model as straight-line functions, for a kernel compiled at run time for that one model
// (kernels/backend/cuda/jit/).
//
// The interpreter keeps its registers in an array indexed at run time, which on the GPU lives in
// local memory (8.8 KB of stack in bucket 4's fused FP64 kernel, 63 KB in bucket 16's), and runs
// in a bucket's sizes. The same instructions written out as code need no such array: each value
// is a named variable that the compiler keeps in a register or folds, and the struct states the
// model's sizes, so that its kernels have the model's own (UserSizes, kernels/models/user/
// user_model.hpp). Each instruction becomes one statement that calls what the interpreter calls
// (detail::apply<operation>, the same loads and Store), so a generated model computes the
// interpreter's operations on the same operands in the same order; only a compiler's contraction
// of a multiply and an add into one fused operation (nvcc's default, as for the built-in models)
// can round differently.
#pragma once

#include <string>

#include "kernels/models/user/user_model.hpp"

namespace ukes::expr {

// The source of `struct <name>`, a Segments type for UserModel (kernels/models/user/
// user_model.hpp) that runs `program`'s segments as code. Needs kernels/models/user/
// user_model.hpp included before it; `program` in host memory.
std::string generated_segments(const UserModelProgram& program, const std::string& name);

}  // namespace ukes::expr
