// What the GPU tests share: skipping where no GPU is usable, and knowing whether "the GPU" is the
// host emulation of the GPU module (kernels/backend/host_gpu/README.md), which CI runs them on.
#pragma once

#include <gtest/gtest.h>

#include <string_view>

#include "kernels/backend/gpu/gpu_backend.hpp"

#define SKIP_WITHOUT_GPU()                                                         \
  do {                                                                             \
    if (!::ukes::gpu_availability().available)                                     \
      GTEST_SKIP() << "no usable GPU here: " << ::ukes::gpu_availability().reason; \
  } while (false)

namespace ukes::testing {

// Whether "the GPU" is libukes_host_gpu.so, the GPU module's pipeline on CPU threads.
inline bool emulated_gpu() {
  return gpu_availability().available &&
         std::string_view(gpu_availability().info.name) == kHostGpuDeviceName;
}

}  // namespace ukes::testing
