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
    const auto run_on_device = [&]<class M>() {
      // Buckets past kMaxGpuUserBucket have no device code (the run spec keeps them on the CPU).
      if constexpr (M::kN <= kMaxGpuUserBucket || !BucketModel<M>) {
        run_model<Api, M>(*request, *report);
      } else {
        throw std::runtime_error("user models in bucket " + std::to_string(M::kN) +
                                 " have no GPU code");
      }
    };
    const bool found = dispatch_model_type(request->user_bucket,
                                           request->model ? request->model : "", run_on_device);
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
