// Device memory of the staged per-system steps (kernels/staged/staged_stages.hpp) for up to
// `capacity` systems: what the cuSOLVER executor and the warp-per-system kernel both factor in.
#pragma once

#include <cstddef>

#include "kernels/backend/cuda/device_buffer.cuh"
#include "kernels/staged/staged_stages.hpp"

namespace ukes {

template <class Model, class T>
class StagedDeviceBuffers {
  using Workspace = StagedWorkspace<Model, T>;
  static constexpr int kN = Model::kN;
  static constexpr int kM = kRows<Model>;

  static std::size_t per(int count, int each) {
    return static_cast<std::size_t>(count) * static_cast<std::size_t>(each);
  }

 public:
  explicit StagedDeviceBuffers(int capacity)
      : capacity_(capacity),
        systems_(per(capacity, 1)),
        scratch_(per(capacity, 1)),
        mass_(per(capacity, kN * kN)),
        mass_info_(per(capacity, 1)),
        b_(per(capacity, kM * kN)),
        s_(per(capacity, Workspace::kS)),
        u_(per(capacity, kM * kM)),
        v_(per(capacity, kN * kN)) {}

  int capacity() const { return capacity_; }

  // Views of the first `count` systems (count <= capacity); `active` may be null.
  Workspace view(int count, int* active) const {
    Workspace ws;
    ws.count = count;
    ws.systems = systems_.data();
    ws.scratch = scratch_.data();
    ws.mass = mass_.data();
    ws.mass_info = mass_info_.data();
    ws.b = b_.data();
    ws.s = s_.data();
    ws.u = u_.data();
    ws.v = v_.data();
    ws.active = active;
    return ws;
  }

 private:
  int capacity_;
  cuda::DeviceBuffer<StagedSystem<Model, T>> systems_;
  cuda::DeviceBuffer<StageScratch<Model, T>> scratch_;
  cuda::DeviceBuffer<T> mass_;
  cuda::DeviceBuffer<int> mass_info_;
  cuda::DeviceBuffer<T> b_, s_, u_, v_;
};

}  // namespace ukes
