// What the GPU tests share: skipping where no GPU is usable, knowing whether "the GPU" is the
// host emulation of the GPU module (kernels/backend/host_gpu/README.md), which CI runs them on,
// and running a command line (the binaries, readelf) for its output.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>
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

struct Output {
  int code = -1;
  std::string text;  // standard output and error together
};

// Runs `command` with sh, to its end.
inline Output shell(const std::string& command) {
  Output o;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen((command + " 2>&1").c_str(), "r"), pclose);
  if (!pipe) return o;
  std::array<char, 4096> buffer;
  while (std::fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) o.text += buffer.data();
  const int status = pclose(pipe.release());
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

}  // namespace ukes::testing
