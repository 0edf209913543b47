// Sweep samples generated on the device: each swept input column of a chunk is filled by the same
// per-(seed, sampler, i, count, d) rule the host uses (kernels/sweep/sampler.hpp), so both
// backends integrate identical inputs (up to the device libm's erfc/log/exp in the inverse CDFs).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/backend/cuda/device_buffer.cuh"
#include "kernels/sweep/sampler.hpp"
#include "kernels/sweep/sweep.hpp"

namespace ukes::cuda {

// One dimension as a kernel reads it; `values` points into device memory.
struct DeviceSweepDimension {
  SweepTarget::Kind target = SweepTarget::Kind::kParam;
  int index = 0;
  DistributionKind kind = DistributionKind::kUniform;
  double a = 0.0, b = 1.0;
  const double* values = nullptr;
  std::int64_t value_count = 0;
};

// One TU-local copy per including translation unit (a header kernel cannot be inline).
static __global__ void generate_sweep_column_kernel(double* column, int chunk_count,
                                                    std::int64_t first, std::int64_t sweep_count,
                                                    std::uint64_t seed, Sampler sampler, int d,
                                                    DeviceSweepDimension dim) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= chunk_count) return;
  const double u = sampling::unit_sample(sampler, seed, first + i, sweep_count, d);
  column[i] = sampling::distribution_at(dim.kind, dim.a, dim.b, dim.values, dim.value_count, u);
}

// A sweep uploaded once per run (its `values` lists), generating any chunk's columns.
class DeviceSweep {
 public:
  explicit DeviceSweep(const SweepSpec& spec) : spec_(spec) {
    std::vector<double> all;
    for (const SweepDimension& dim : spec.dimensions)
      all.insert(all.end(), dim.distribution.values.begin(), dim.distribution.values.end());
    values_.resize(all.size());
    if (!all.empty())
      UKES_CUDA_CHECK(cudaMemcpy(values_.data(), all.data(), sizeof(double) * all.size(),
                                 cudaMemcpyHostToDevice));
    std::int64_t offset = 0;
    for (const SweepDimension& dim : spec.dimensions) {
      DeviceSweepDimension d;
      d.target = dim.target.kind;
      d.index = dim.target.index;
      d.kind = dim.distribution.kind;
      d.a = dim.distribution.a;
      d.b = dim.distribution.b;
      d.value_count = static_cast<std::int64_t>(dim.distribution.values.size());
      d.values = d.value_count > 0 ? values_.data() + offset : nullptr;
      offset += d.value_count;
      dims_.push_back(d);
    }
  }

  // Overwrites the swept columns of a chunk's packed inputs ([params | q0 | qd0][count], device)
  // for sweep systems first .. first + count - 1.
  void generate(double* inputs, int count, int params, int n, std::int64_t first,
                cudaStream_t stream) const {
    if (count <= 0) return;
    constexpr int kThreads = 256;
    const int blocks = (count + kThreads - 1) / kThreads;
    const auto c = static_cast<std::size_t>(count);
    for (std::size_t d = 0; d < dims_.size(); ++d) {
      const DeviceSweepDimension& dim = dims_[d];
      std::size_t row = static_cast<std::size_t>(dim.index);
      if (dim.target == SweepTarget::Kind::kQ0) row += static_cast<std::size_t>(params);
      if (dim.target == SweepTarget::Kind::kQd0) row += static_cast<std::size_t>(params + n);
      generate_sweep_column_kernel<<<blocks, kThreads, 0, stream>>>(
          inputs + row * c, count, first, spec_.count, spec_.seed, spec_.sampler,
          static_cast<int>(d), dim);
      check_launch("generate_sweep_column_kernel");
    }
  }

 private:
  const SweepSpec& spec_;
  DeviceBuffer<double> values_;
  std::vector<DeviceSweepDimension> dims_;
};

}  // namespace ukes::cuda
