// From a model's description to the type its kernels are instantiated for. Apart from buckets.hpp
// because it needs the complete CompiledUserModel (its definition and JSON), which the CUDA
// module's host code, compiled by nvcc, does not include.
#pragma once

#include "kernels/models/catalogue.hpp"
#include "kernels/models/model_info.hpp"
#include "kernels/models/user/buckets.hpp"
#include "kernels/models/user/compiled_model.hpp"

namespace ukes {

// The capacity bucket of a model's kernels: its own for a user model, 0 for a built-in (whose
// kernels are found by name).
inline int user_bucket_of(const ModelInfo& model) { return model.user ? model.user->bucket : 0; }

// Calls f.template operator()<M>() for `model`: its bucket's UserModel for a user model, else the
// catalogue model of its name; false when there is none.
template <class F>
bool dispatch_model_of(const ModelInfo& model, F&& f) {
  return dispatch_model_type(user_bucket_of(model), model.name, f);
}

}  // namespace ukes
