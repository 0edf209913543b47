// The staged path's CUDA executor: the per-system steps as kernels (one thread per system) on a
// stream, the mass matrices factored by cusolverDn{D,S}potrfBatched and the constraint matrices
// B = A L^-T by cusolverDn{D,S}gesvdjBatched (m, n <= 32). Device workspace is allocated once
// per run. Every CUDA and cuSOLVER call is checked; a failure throws std::runtime_error naming
// the call.
#pragma once

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/backend/cuda/cuda_api.cuh"
#include "kernels/backend/device/staged_device_buffers.hpp"
#include "kernels/staged/staged_integrator.hpp"

namespace ukes {
namespace staged_cuda {

// The solver's parameters of gesvdj (defaults: tolerance eps, at most 100 sweeps, sorted).
class GesvdjParams {
 public:
  GesvdjParams() { cuda::check(cusolverDnCreateGesvdjInfo(&info_), "cusolverDnCreateGesvdjInfo"); }
  ~GesvdjParams() { cusolverDnDestroyGesvdjInfo(info_); }
  GesvdjParams(const GesvdjParams&) = delete;
  GesvdjParams& operator=(const GesvdjParams&) = delete;
  gesvdjInfo_t get() const { return info_; }

 private:
  gesvdjInfo_t info_ = nullptr;
};

// cuSOLVER's batched routines by precision: lower Cholesky (lda = n), and the full SVD with
// vectors of B (m x n, lda = ldu = m, ldv = n).
inline cusolverStatus_t potrf_batched(cusolverDnHandle_t h, int n, double** a, int* info,
                                      int batch) {
  return cusolverDnDpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, n, info, batch);
}
inline cusolverStatus_t potrf_batched(cusolverDnHandle_t h, int n, float** a, int* info,
                                      int batch) {
  return cusolverDnSpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, n, info, batch);
}
inline cusolverStatus_t gesvdj_batched_buffer_size(cusolverDnHandle_t h, int m, int n,
                                                   const double* b, const double* s,
                                                   const double* u, const double* v, int* lwork,
                                                   gesvdjInfo_t params, int batch) {
  return cusolverDnDgesvdjBatched_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, m, n, b, m, s, u, m, v, n,
                                             lwork, params, batch);
}
inline cusolverStatus_t gesvdj_batched_buffer_size(cusolverDnHandle_t h, int m, int n,
                                                   const float* b, const float* s, const float* u,
                                                   const float* v, int* lwork, gesvdjInfo_t params,
                                                   int batch) {
  return cusolverDnSgesvdjBatched_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, m, n, b, m, s, u, m, v, n,
                                             lwork, params, batch);
}
inline cusolverStatus_t gesvdj_batched(cusolverDnHandle_t h, int m, int n, double* b, double* s,
                                       double* u, double* v, double* work, int lwork, int* info,
                                       gesvdjInfo_t params, int batch) {
  return cusolverDnDgesvdjBatched(h, CUSOLVER_EIG_MODE_VECTOR, m, n, b, m, s, u, m, v, n, work,
                                  lwork, info, params, batch);
}
inline cusolverStatus_t gesvdj_batched(cusolverDnHandle_t h, int m, int n, float* b, float* s,
                                       float* u, float* v, float* work, int lwork, int* info,
                                       gesvdjInfo_t params, int batch) {
  return cusolverDnSgesvdjBatched(h, CUSOLVER_EIG_MODE_VECTOR, m, n, b, m, s, u, m, v, n, work,
                                  lwork, info, params, batch);
}

}  // namespace staged_cuda

template <class Model, class T>
class CudaStagedExecutor {
  static constexpr int kN = Model::kN;
  static constexpr int kM = kRows<Model>;
  static_assert(kN <= 32 && kM <= 32, "gesvdjBatched takes m, n <= 32");
  using Workspace = StagedWorkspace<Model, T>;
  template <class E>
  using DeviceArray = cuda::DeviceBuffer<E>;

 public:
  CudaStagedExecutor(int count, cudaStream_t stream, cusolverDnHandle_t solver)
      : stream_(stream),
        solver_(solver),
        buffers_(count),
        mass_ptr_(static_cast<std::size_t>(count)),
        svd_info_(static_cast<std::size_t>(count)),
        active_(1) {
    ws_ = buffers_.view(count, active_.data());
    cuda::check(cusolverDnSetStream(solver_, stream_), "cusolverDnSetStream");
    // potrfBatched takes an array of matrix pointers.
    std::vector<T*> pointers(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) pointers[static_cast<std::size_t>(i)] = ws_.mass_of(i);
    cuda::check(cudaMemcpyAsync(mass_ptr_.data(), pointers.data(), pointers.size() * sizeof(T*),
                                cudaMemcpyHostToDevice, stream_),
                "cudaMemcpyAsync(mass pointers)");
    if constexpr (kM > 0) {
      cuda::check(
          staged_cuda::gesvdj_batched_buffer_size(solver_, kM, kN, ws_.b, ws_.s, ws_.u, ws_.v,
                                                  &svd_lwork_, svd_params_.get(), count),
          "cusolverDn<t>gesvdjBatched_bufferSize");
      svd_work_.resize(static_cast<std::size_t>(svd_lwork_));
    }
    cuda::check(cudaMallocHost(reinterpret_cast<void**>(&active_host_), sizeof(int)),
                "cudaMallocHost");
    // `pointers` dies with this constructor: the copy must have completed.
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

  ~CudaStagedExecutor() {
    cudaStreamSynchronize(stream_);  // nothing may still use the workspace freed below
    if (active_host_ != nullptr) cudaFreeHost(active_host_);
  }
  CudaStagedExecutor(const CudaStagedExecutor&) = delete;
  CudaStagedExecutor& operator=(const CudaStagedExecutor&) = delete;

  const Workspace& workspace() const { return ws_; }

  template <class F>
  void for_each_system(const F& f) {
    const int blocks = (ws_.count + kFusedBlockThreads - 1) / kFusedBlockThreads;
    cuda::system_kernel<<<blocks, kFusedBlockThreads, 0, stream_>>>(ws_.count, f);
    cuda::check_launch("staged per-system kernel");
  }

  void factor_mass() {
    cuda::check(staged_cuda::potrf_batched(solver_, kN, mass_ptr_.data(), ws_.mass_info, ws_.count),
                "cusolverDn<t>potrfBatched");
  }

  // A matrix the Jacobi sweeps leave unconverged (info > 0) is used as it is, as the fused path
  // does at its own sweep cap.
  void factor_constraints() {
    if constexpr (kM > 0) {
      cuda::check(
          staged_cuda::gesvdj_batched(solver_, kM, kN, ws_.b, ws_.s, ws_.u, ws_.v, svd_work_.data(),
                                      svd_lwork_, svd_info_.data(), svd_params_.get(), ws_.count),
          "cusolverDn<t>gesvdjBatched");
    }
  }

  void clear_active() {
    cuda::check(cudaMemsetAsync(ws_.active, 0, sizeof(int), stream_), "cudaMemsetAsync(active)");
  }

  int active() {
    cuda::check(
        cudaMemcpyAsync(active_host_, ws_.active, sizeof(int), cudaMemcpyDeviceToHost, stream_),
        "cudaMemcpyAsync(active)");
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return *active_host_;
  }

 private:
  cudaStream_t stream_;
  cusolverDnHandle_t solver_;
  StagedDeviceBuffers<CudaApi, Model, T> buffers_;
  DeviceArray<T*> mass_ptr_;
  DeviceArray<int> svd_info_;
  DeviceArray<int> active_;
  staged_cuda::GesvdjParams svd_params_;
  int svd_lwork_ = 0;
  DeviceArray<T> svd_work_;
  int* active_host_ = nullptr;
  Workspace ws_;
};

// The staged path's entry in the device API. All views hold DEVICE pointers with the layouts of
// batch_layout.hpp. Blocks until the batch is integrated. `cancel` (may be null) is checked
// between iterations: once requested, return early. Binds `solver` to `stream`.
template <class Model, class T>
void CudaApi::run_staged(const BatchInputView& in, const RunSettings<T>& s,
                         const BatchOutputView& out, Stream& stream, Solver& solver,
                         const CancelFlag* cancel) {
  if (in.count <= 0) return;
  CudaStagedExecutor<Model, T> executor(in.count, stream.get(), solver.get());
  ukes::run_staged<Model, T>(executor, in, s, out, cancel);
}

}  // namespace ukes
