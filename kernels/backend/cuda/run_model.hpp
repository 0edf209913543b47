// What the module's dispatcher calls per model; each model's definition is instantiated in its own
// translation unit (instantiate_model.cu.in) so the device code of the catalogue builds in
// parallel.
#pragma once

#include "kernels/backend/gpu/gpu_module_abi.hpp"

namespace ukes::cuda {

// Integrates request.input on the GPU; throws on a CUDA error.
template <class Model>
void run_model_on_gpu(const GpuRunRequest& request, GpuRunReport& report);

}  // namespace ukes::cuda
