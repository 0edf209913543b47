// Whether the installed NVIDIA driver can run the CUDA runtime this build links, said in one line.
// Header-only: the CUDA module's probe uses it, and host tests check the text without a driver.
#pragma once

#include <string>

namespace ukes {

// A CUDA version number (1000 major + 10 minor, as cudaDriverGetVersion and CUDART_VERSION give
// it) as "13.0".
inline std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// The oldest driver branch of each CUDA major version (NVIDIA's CUDA Toolkit release notes,
// "CUDA Driver" table: 12.x needs R525, 13.x needs R580).
inline int minimum_driver_branch(int runtime_version) {
  switch (runtime_version / 1000) {
    case 12:
      return 525;
    case 13:
      return 580;
    default:
      return 0;  // unknown here: the message then names the CUDA version alone
  }
}

// "" when a driver supporting CUDA `driver_version` (0: no driver found) runs a runtime of
// `runtime_version`; otherwise what is wrong and what to do, in one line. Any driver of the
// runtime's major version will do (CUDA's minor version compatibility: 13.0's driver runs 13.x).
inline std::string driver_requirement_problem(int driver_version, int runtime_version) {
  if (driver_version > 0 && driver_version / 1000 >= runtime_version / 1000) return "";
  const int branch = minimum_driver_branch(runtime_version);
  std::string needs = "this build of ukes needs CUDA " + cuda_version_text(runtime_version);
  if (branch > 0) needs += " (NVIDIA driver R" + std::to_string(branch) + " or newer)";
  if (driver_version <= 0) return "no NVIDIA driver found; " + needs;
  return "the NVIDIA driver supports CUDA " + cuda_version_text(driver_version) + " only; " +
         needs + ": update the driver, or run with device cpu";
}

}  // namespace ukes
