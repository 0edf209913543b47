#include <thread>

#include "kernels/backend/cpu/cpu_backend.hpp"

namespace ukes {

int default_cpu_threads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}

}  // namespace ukes
