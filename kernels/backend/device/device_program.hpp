// A user model's compiled program in device memory, for the run of one batch: the kernels read
// it through BatchInputView::program (kernels/models/user/user_model.hpp).
#pragma once

#include "kernels/models/user/user_model.hpp"

namespace ukes {

template <class Api>
class DeviceProgram {
 public:
  // Copies `host` (whose code and constants are host memory) to the device.
  explicit DeviceProgram(const UserModelProgram& host) {
    const auto instructions = static_cast<std::size_t>(host.instruction_count);
    const auto constants = static_cast<std::size_t>(host.constant_count);
    code_.resize(instructions > 0 ? instructions : 1);
    constants_.resize(constants > 0 ? constants : 1);
    if (instructions > 0)
      Api::copy_now(code_.data(), host.code.code, sizeof(expr::Instruction) * instructions);
    if (constants > 0)
      Api::copy_now(constants_.data(), host.code.constants, sizeof(double) * constants);
    UserModelProgram device = host;
    device.code.code = code_.data();
    device.code.constants = constants_.data();
    program_.resize(1);
    Api::copy_now(program_.data(), &device, sizeof device);
  }

  const UserModelProgram* get() const { return program_.data(); }

 private:
  typename Api::template DeviceBuffer<expr::Instruction> code_;
  typename Api::template DeviceBuffer<double> constants_;
  typename Api::template DeviceBuffer<UserModelProgram> program_;
};

}  // namespace ukes
