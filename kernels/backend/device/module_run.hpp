// A module's run entry point (gpu_module_abi.hpp), written once for every device API: dispatch
// to the model's instantiation, exceptions turned into error text for the host, and after a
// failure the API's verdict on whether the device is still usable.
#pragma once

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

#include "kernels/backend/device/run_model.hpp"
#include "kernels/backend/gpu/gpu_module_abi.hpp"
#include "kernels/models/catalogue.hpp"
#include "kernels/models/user/buckets.hpp"

namespace ukes::device {

inline void write_text(char* buffer, std::size_t capacity, const std::string& text) {
  if (capacity == 0) return;
  std::snprintf(buffer, capacity, "%s", text.c_str());
}

template <class Api>
int run_module(const GpuRunRequest* request, GpuRunReport* report, char* error,
               std::size_t capacity) {
  try {
    Api::set_device(request->device);
    // A user model runs in the GPU module's bucket that holds it (kernels/models/user/buckets.hpp).
    const int bucket = request->user_bucket;
    const int gpu_bucket = gpu_user_bucket_for(bucket);
    if (bucket > 0 && gpu_bucket == 0)  // the run spec keeps these on the CPU
      throw std::runtime_error("user models in bucket " + std::to_string(bucket) +
                               " have no GPU code");
    const bool found = dispatch_model_type<GpuUserBuckets>(
        gpu_bucket, request->model ? request->model : "",
        [&]<class M>() { run_model<Api, M>(*request, *report); });
    if (!found) {
      write_text(error, capacity, std::string("unknown model: ") + request->model);
      return kGpuRunFailed;
    }
    return kGpuRunOk;
  } catch (const std::exception& e) {
    write_text(error, capacity, e.what());
  } catch (...) {
    write_text(error, capacity, "unknown error");
  }
  return Api::context_is_broken() ? kGpuRunDeviceLost : kGpuRunFailed;
}

}  // namespace ukes::device
