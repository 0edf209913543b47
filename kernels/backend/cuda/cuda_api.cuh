// The device API (kernels/backend/device/device_api.hpp) on the CUDA runtime and cuSOLVER: what
// libukes_cuda.so's pipeline runs on.
#pragma once

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend/cuda/compiled_kernels.cuh"
#include "kernels/backend/cuda/cuda_check.cuh"
#include "kernels/backend/cuda/device_buffer.cuh"
#include "kernels/backend/cuda/device_statistics.hpp"
#include "kernels/backend/cuda/system_kernel.cuh"
#include "kernels/backend/cuda/warp_team.cuh"
#include "kernels/backend/device/system_kernels.hpp"
#include "kernels/backend/thrust/statistics_input.hpp"
#include "kernels/ensemble/statistics.hpp"

namespace ukes::cuda {

// kernel(warp, i) for each of `count` systems, one warp each. Whole warps return together (the
// grid is a whole number of warps): every lane of a live warp takes part in every collective.
// The function object is a __grid_constant__ parameter, as system_kernel.cuh says why.
template <class Kernel>
__global__ void team_kernel(int count, const __grid_constant__ Kernel kernel) {
  const WarpTeam team;
  const int i = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / kWarpSize);
  if (i < count) kernel(team, i);
}

// Owns a cuSOLVER handle (only the staged path needs one).
class SolverHandle {
 public:
  SolverHandle() { check(cusolverDnCreate(&handle_), "cusolverDnCreate"); }
  SolverHandle(const SolverHandle&) = delete;
  SolverHandle& operator=(const SolverHandle&) = delete;
  ~SolverHandle() { cusolverDnDestroy(handle_); }
  cusolverDnHandle_t get() const { return handle_; }

 private:
  cusolverDnHandle_t handle_ = nullptr;
};

}  // namespace ukes::cuda

namespace ukes {

struct CudaApi {
  template <class T>
  using DeviceBuffer = cuda::DeviceBuffer<T>;
  template <class T>
  using PinnedBuffer = cuda::PinnedBuffer<T>;
  using Stream = cuda::Stream;
  using Event = cuda::Event;
  using StopWord = cuda::DeviceStopWord;
  using Solver = cuda::SolverHandle;

  static constexpr int kMinChunkSystems = 1 << 16;  // enough threads to fill an H100 or H200
  static constexpr int kChunkGranule = 4096;        // a multiple of every block size we launch
  static int chunk_limit() { return std::numeric_limits<int>::max(); }

  static void copy(void* dst, const void* src, std::size_t bytes, Stream& stream) {
    UKES_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream.get()));
  }
  static void copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                      std::size_t width, std::size_t rows, Stream& stream) {
    UKES_CUDA_CHECK(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows,
                                      cudaMemcpyDefault, stream.get()));
  }
  static void copy_now(void* dst, const void* src, std::size_t bytes) {
    UKES_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  }
  static void set_device(int device) { cuda::check(cudaSetDevice(device), "cudaSetDevice"); }
  static std::size_t free_memory() {
    std::size_t free_bytes = 0, total_bytes = 0;
    UKES_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    return free_bytes;
  }
  static float elapsed_ms(const Event& start, const Event& stop) {
    return cuda::elapsed_ms(start, stop);
  }

  template <class Kernel>
  static void launch_systems(Stream& stream, int count, const Kernel& kernel) {
    if (count <= 0) return;
    const int blocks = (count + kFusedBlockThreads - 1) / kFusedBlockThreads;
    cuda::system_kernel<<<blocks, kFusedBlockThreads, 0, stream.get()>>>(count, kernel);
    cuda::check_launch("system_kernel");
  }
  // A fused kernel compiled at run time (compiled_kernels.cuh), for the kernel object type
  // Kernel = FusedSystem<Model, T, ...>, whose bytes it takes; `program` is a user model's (null
  // for a built-in).
  using CompiledKernel = cuda::CompiledKernel;
  template <class Kernel>
  static std::shared_ptr<const CompiledKernel> compile(const UserModelProgram* program,
                                                       const CancelFlag* cancel, std::string* why) {
    return cuda::compiled_fused_kernel(program, cuda::FusedSpecOf<Kernel>::get(), cancel, why);
  }
  template <class Kernel>
  static void launch_compiled(Stream& stream, int count, const CompiledKernel& compiled,
                              const Kernel& kernel) {
    if (count <= 0) return;
    const int blocks = (count + kFusedBlockThreads - 1) / kFusedBlockThreads;
    void* args[] = {&count, const_cast<Kernel*>(&kernel)};
    UKES_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(compiled.kernel), dim3(blocks),
                                     dim3(kFusedBlockThreads), args, 0, stream.get()));
  }
  template <class Kernel>
  static void launch_teams(Stream& stream, int count, const Kernel& kernel) {
    if (count <= 0) return;
    const long long threads = static_cast<long long>(count) * kWarpSize;
    const int blocks =
        static_cast<int>((threads + kWarpPathBlockThreads - 1) / kWarpPathBlockThreads);
    cuda::team_kernel<<<blocks, kWarpPathBlockThreads, 0, stream.get()>>>(count, kernel);
    cuda::check_launch("team_kernel");
  }

  // Defined in staged_executor.cuh.
  template <class Model, class T>
  static void run_staged(const BatchInputView& in, const RunSettings<T>& s,
                         const BatchOutputView& out, Stream& stream, Solver& solver,
                         const CancelFlag* cancel);

  static EnsembleStatistics statistics(const ThrustStatisticsInput& in, Stream& stream,
                                       std::vector<std::int32_t>* failed_ids) {
    return cuda::device_statistics(in, stream.get(), failed_ids);
  }

  // After a failed run: whether the context still works. A sticky error (illegal address,
  // hardware fault) is returned again by every later call, synchronization included; an ordinary
  // one was cleared by cudaGetLastError.
  static bool context_is_broken() {
    (void)cudaGetLastError();
    return cudaDeviceSynchronize() != cudaSuccess;
  }
};

}  // namespace ukes

#include "kernels/backend/cuda/staged_executor.cuh"
