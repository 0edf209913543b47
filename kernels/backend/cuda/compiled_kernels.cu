#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <list>
#include <map>
#include <mutex>
#include <utility>

#include "kernels/backend/cuda/compiled_kernels.cuh"
#include "kernels/backend/cuda/cuda_check.cuh"
#include "kernels/backend/cuda/jit/nvrtc_compiler.hpp"

namespace ukes::cuda {
namespace {

// Distinct kernels kept: a server that meets many models keeps the most recently used ones.
constexpr std::size_t kCacheCapacity = 64;

bool jit_enabled() {
  const char* text = std::getenv("UKES_GPU_JIT");
  return text == nullptr || std::string(text) != "0";
}

int device_arch() {
  int device = 0, major = 0, minor = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
        "cudaDeviceGetAttribute");
  check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
        "cudaDeviceGetAttribute");
  return 10 * major + minor;
}

std::string describe(const jit::CompiledKernel& compiled, int arch) {
  const jit::KernelResources& r = compiled.resources;
  char text[200];
  std::snprintf(text, sizeof text,
                "compiled for the model (NVRTC, sm_%d, %s %.2f s, kept for the process): %d "
                "registers, %d B stack, %d/%d B spill stores/loads",
                arch, compiled.from_cache ? "from the disk cache in" : "compiled in",
                compiled.compile_s, r.registers, r.stack, r.spill_stores, r.spill_loads);
  return text;
}

std::shared_ptr<const CompiledKernel> load(const jit::CompiledKernel& compiled, int arch) {
  auto kernel = std::make_shared<CompiledKernel>();
  check(cudaLibraryLoadData(&kernel->library, compiled.cubin.data(), nullptr, nullptr, 0, nullptr,
                            nullptr, 0),
        "cudaLibraryLoadData");
  check(cudaLibraryGetKernel(&kernel->kernel, kernel->library, compiled.lowered_name.c_str()),
        "cudaLibraryGetKernel");
  kernel->description = describe(compiled, arch);
  return kernel;
}

// Kernels and failures by source text (which holds the whole model and variant) and arch, most
// recently used last; an entry is a future while NVRTC works on it.
struct Entry {
  std::shared_ptr<const CompiledKernel> kernel;
  std::string why;  // when there is none
};
class Cache {
 public:
  // The entry for `key`, started with `make` on a thread of its own when there is none.
  template <class Make>
  std::shared_future<Entry> find_or_start(const std::string& key, Make&& make) {
    const std::lock_guard lock(mutex_);
    if (const auto it = entries_.find(key); it != entries_.end()) {
      order_.splice(order_.end(), order_, it->second.second);
      return it->second.first;
    }
    std::shared_future<Entry> entry = std::async(std::launch::async, std::forward<Make>(make));
    order_.push_back(key);
    entries_.emplace(key, std::make_pair(entry, std::prev(order_.end())));
    if (entries_.size() > kCacheCapacity) {
      entries_.erase(order_.front());
      order_.pop_front();
    }
    return entry;
  }

 private:
  std::mutex mutex_;
  std::list<std::string> order_;
  std::map<std::string, std::pair<std::shared_future<Entry>, std::list<std::string>::iterator>>
      entries_;
};

Cache& cache() {
  static auto* instance = new Cache;  // never destroyed: libraries outlive static destruction
  return *instance;
}

}  // namespace

CompiledKernel::~CompiledKernel() {
  if (library != nullptr) cudaLibraryUnload(library);
}

std::shared_ptr<const CompiledKernel> compiled_fused_kernel(const UserModelProgram* program,
                                                            const jit::FusedKernelSpec& spec,
                                                            const CancelFlag* cancel,
                                                            std::string* why) {
  if (!jit_enabled()) {
    *why = "UKES_GPU_JIT=0";
    return nullptr;
  }
  const int arch = device_arch();
  auto source = std::make_shared<const jit::FusedSource>(jit::fused_source(program, spec));
  const std::string key = std::to_string(arch) + "\n" + source->text;
  const auto make = [source, arch] {
    Entry made;
    try {
      made.kernel = load(jit::compile_kernel(*source, arch), arch);
    } catch (const std::exception& e) {
      made.why = e.what();
      (void)cudaGetLastError();  // a failed load is not sticky: the next launch must not see it
    }
    return made;
  };
  std::shared_future<Entry> entry;
  try {
    entry = cache().find_or_start(key, make);
  } catch (const std::exception& e) {  // no thread for NVRTC: this run interprets
    *why = e.what();
    return nullptr;
  }
  while (entry.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
    if (cancel != nullptr && cancel->requested()) {
      *why = "the run was cancelled while NVRTC compiled its kernel";
      return nullptr;
    }
  }
  *why = entry.get().why;
  return entry.get().kernel;
}

}  // namespace ukes::cuda
