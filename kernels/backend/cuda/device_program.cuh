// A user model's compiled program in device memory, for the run of one batch: the kernels read
// it through BatchInputView::program (kernels/models/user/user_model.hpp).
#pragma once

#include "kernels/backend/cuda/device_buffer.cuh"
#include "kernels/models/user/user_model.hpp"

namespace ukes::cuda {

class DeviceProgram {
 public:
  // Copies `host` (whose code and constants are host memory) to the device.
  explicit DeviceProgram(const UserModelProgram& host) {
    const auto instructions = static_cast<std::size_t>(host.instruction_count);
    const auto constants = static_cast<std::size_t>(host.constant_count);
    code_.resize(instructions > 0 ? instructions : 1);
    constants_.resize(constants > 0 ? constants : 1);
    if (instructions > 0) {
      UKES_CUDA_CHECK(cudaMemcpy(code_.data(), host.code.code,
                                 sizeof(expr::Instruction) * instructions, cudaMemcpyHostToDevice));
    }
    if (constants > 0) {
      UKES_CUDA_CHECK(cudaMemcpy(constants_.data(), host.code.constants, sizeof(double) * constants,
                                 cudaMemcpyHostToDevice));
    }
    UserModelProgram device = host;
    device.code.code = code_.data();
    device.code.constants = constants_.data();
    program_.resize(1);
    UKES_CUDA_CHECK(cudaMemcpy(program_.data(), &device, sizeof device, cudaMemcpyHostToDevice));
  }

  const UserModelProgram* get() const { return program_.data(); }

 private:
  Buffer<expr::Instruction, Memory::kDevice> code_;
  Buffer<double, Memory::kDevice> constants_;
  Buffer<UserModelProgram, Memory::kDevice> program_;
};

}  // namespace ukes::cuda
