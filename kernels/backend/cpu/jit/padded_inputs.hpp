// A batch's inputs as the code compiled at run time for one user model reads them
// (kernels/backend/cpu/jit/cpu_jit.cpp's entry point runs through it).
//
// SystemKernel::begin reads model_shape(model).params rows of a batch's parameters (and of a
// controlled run's controller parameters). For a model of generated segments that count is
// kParamCount, the model's parameters and the slots derived from them (kernels/models/
// model_concept.hpp), while the batch holds the model's own parameters alone: begin would read
// past them. begin fills the derived slots by derive_parameters, so the rows past the model's
// own are never used; here they are zeros that exist.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "kernels/ensemble/batch_layout.hpp"
#include "kernels/models/model_concept.hpp"

namespace ukes::cpu_jit {

template <class Model>
class PaddedInputs {
 public:
  PaddedInputs(const BatchInputView& in, int own_params) : view_(in) {
    const auto rows = static_cast<std::size_t>(kParamCount<Model>);
    const auto count = static_cast<std::size_t>(in.count);
    const auto own = static_cast<std::size_t>(std::min(own_params, kParamCount<Model>));
    pad(in.params, own, rows, count, params_, view_.params);
    pad(in.control_params, own, rows, count, control_params_, view_.control_params);
  }
  const BatchInputView& view() const { return view_; }

 private:
  template <class Value>
  static void pad(const Value* rows_in, std::size_t own, std::size_t rows, std::size_t count,
                  std::vector<Value>& storage, const Value*& view) {
    if (rows_in == nullptr) return;
    storage.assign(rows * count, Value(0));
    std::copy(rows_in, rows_in + own * count, storage.begin());
    view = storage.data();
  }

  BatchInputView view_;
  std::vector<Storage<Encoding::kReal>> params_, control_params_;
};

}  // namespace ukes::cpu_jit
