// What a module's dispatcher calls per model (defined in chunked_run.hpp); each model is
// instantiated in its own translation unit (instantiate_model.*.in of each module) so that the
// catalogue builds in parallel.
#pragma once

#include "kernels/backend/gpu/gpu_module_abi.hpp"

namespace ukes::device {

// Integrates request.input on Api's device; throws on a device error.
template <class Api, class Model>
void run_model(const GpuRunRequest& request, GpuRunReport& report);

}  // namespace ukes::device
