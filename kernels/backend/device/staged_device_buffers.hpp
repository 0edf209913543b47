// Device memory of the staged per-system steps (kernels/staged/staged_stages.hpp) for up to
// `capacity` systems: what the staged path's executor and the warp path's teams factor in.
#pragma once

#include <cstddef>

#include "kernels/staged/staged_stages.hpp"

namespace ukes {

template <class Api, class Model, class T>
class StagedDeviceBuffers {
  using Workspace = StagedWorkspace<Model, T>;
  static constexpr int kN = Model::kN;
  static constexpr int kM = kRows<Model>;
  template <class E>
  using Array = typename Api::template DeviceBuffer<E>;

  static std::size_t per(int count, int each) {
    return static_cast<std::size_t>(count) * static_cast<std::size_t>(each);
  }

 public:
  explicit StagedDeviceBuffers(int capacity) : capacity_(capacity) {
    systems_.resize(per(capacity, 1));
    scratch_.resize(per(capacity, 1));
    mass_.resize(per(capacity, kN * kN));
    mass_info_.resize(per(capacity, 1));
    b_.resize(per(capacity, kM * kN));
    s_.resize(per(capacity, Workspace::kS));
    u_.resize(per(capacity, kM * kM));
    v_.resize(per(capacity, kN * kN));
  }

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
  Array<SystemKernel<Model, T>> systems_;
  Array<StageScratch<Model, T>> scratch_;
  Array<T> mass_;
  Array<int> mass_info_;
  Array<T> b_, s_, u_, v_;
};

}  // namespace ukes
