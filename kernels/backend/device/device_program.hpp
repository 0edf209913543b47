// Compiled programs in device memory, for the run of one batch: a user model's, which the
// kernels read through BatchInputView::program (kernels/models/user/user_model.hpp), and a run's
// event program (RunSettings::events, kernels/ensemble/event_table.hpp).
#pragma once

#include "kernels/models/user/user_model.hpp"

namespace ukes {

// A program's instructions and constants in device memory: view() is `host` pointing there.
template <class Api>
class DeviceCode {
 public:
  DeviceCode(const expr::ProgramView& host, int instruction_count, int constant_count)
      : view_(host) {
    const auto instructions = static_cast<std::size_t>(instruction_count);
    const auto constants = static_cast<std::size_t>(constant_count);
    code_.resize(instructions > 0 ? instructions : 1);
    constants_.resize(constants > 0 ? constants : 1);
    if (instructions > 0)
      Api::copy_now(code_.data(), host.code, sizeof(expr::Instruction) * instructions);
    if (constants > 0) Api::copy_now(constants_.data(), host.constants, sizeof(double) * constants);
    view_.code = code_.data();
    view_.constants = constants_.data();
  }

  const expr::ProgramView& view() const { return view_; }

 private:
  expr::ProgramView view_;
  typename Api::template DeviceBuffer<expr::Instruction> code_;
  typename Api::template DeviceBuffer<double> constants_;
};

template <class Api>
class DeviceProgram {
 public:
  // Copies `host` (whose code and constants are host memory) to the device.
  explicit DeviceProgram(const UserModelProgram& host)
      : code_(host.code, host.instruction_count, host.constant_count) {
    UserModelProgram device = host;
    device.code = code_.view();
    program_.resize(1);
    Api::copy_now(program_.data(), &device, sizeof device);
  }

  const UserModelProgram* get() const { return program_.data(); }

 private:
  DeviceCode<Api> code_;
  typename Api::template DeviceBuffer<UserModelProgram> program_;
};

}  // namespace ukes
