// The buffers of the GPU module's chunk pipeline (chunked_run.hpp), over any device API
// (device_api.hpp): a chunk's per-system arrays on the device and their pinned host mirrors, the
// two pipeline slots, and the per-system results kept on the device for the statistics. A
// process keeps them from run to run (device_context.hpp), so they only ever grow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/backend/thrust/statistics_input.hpp"
#include "kernels/ensemble/ensemble.hpp"

namespace ukes::device {

// Resizes `buffer` to hold at least `count` elements; contents are not kept when it grows.
template <class Buffer>
void grow(Buffer& buffer, std::size_t count) {
  if (buffer.size() < count) buffer.resize(count);
}

// Per-system array widths of one model, in elements.
struct ModelWidths {
  int n = 0;
  int params = 0;
  int residual_slots = 0;
  int inputs() const { return params + 2 * n; }                    // params, q0, qd0
  int real_outputs() const { return 4 + 2 * n + residual_slots; }  // t, q, qd, res, force, incons.
};

// Device (or pinned host) storage for up to `capacity` systems of one chunk.
template <template <class> class Buffer>
struct ChunkArrays {
  Buffer<double> inputs;        // [params | q0 | qd0][count]
  Buffer<double> reals;         // [t | q | qd | residual_max | force | inconsistency]
  Buffer<std::int32_t> status;  // [count]
  Buffer<std::int32_t> slot;    // [count], chunk-local trajectory slot or -1
  Buffer<std::int64_t> counts;  // [steps | rejected][count]
  Buffer<double> traj_q, traj_qd, traj_residual, traj_force;  // [slot][sample][width]

  // Room for `capacity` systems of widths w, and `slots` trajectories of `samples` samples.
  void reserve(const ModelWidths& w, int capacity, int slots, int samples) {
    const auto c = static_cast<std::size_t>(capacity);
    grow(inputs, c * w.inputs());
    grow(reals, c * w.real_outputs());
    grow(status, c);
    grow(slot, c);
    grow(counts, 2 * c);
    const std::size_t per_slot = static_cast<std::size_t>(slots) * samples;
    grow(traj_q, per_slot * w.n);
    grow(traj_qd, per_slot * w.n);
    grow(traj_residual, per_slot * w.residual_slots);
    grow(traj_force, per_slot * w.n);
  }

  // Views of a chunk of `count` systems packed at the start of the buffers.
  BatchInputView input_view(const ModelWidths& w, int count) const {
    const double* base = inputs.data();
    const auto c = static_cast<std::size_t>(count);
    return {count, base, base + c * w.params, base + c * (w.params + w.n)};
  }
  BatchOutputView output_view(const ModelWidths& w, int count) const {
    const auto c = static_cast<std::size_t>(count);
    double* r = reals.data();
    BatchOutputView v;
    v.count = count;
    v.status = status.data();
    v.t = r;
    v.q = r + c;
    v.qd = r + c * (1 + w.n);
    v.residual_max = r + c * (1 + 2 * w.n);
    v.force_max = r + c * (1 + 2 * w.n + w.residual_slots);
    v.inconsistency_max = r + c * (2 + 2 * w.n + w.residual_slots);
    v.steps = counts.data();
    v.rejected = counts.data() + c;
    v.traj_slot = slot.data();
    v.traj_q = traj_q.data();
    v.traj_qd = traj_qd.data();
    v.traj_residual = traj_residual.data();
    v.traj_force = traj_force.data();
    return v;
  }
};

// One of the two pipeline slots: device arrays, their pinned host mirror, a stream, and which
// systems it holds.
template <class Api>
struct PipelineSlot {
  ChunkArrays<Api::template DeviceBuffer> device;
  ChunkArrays<Api::template PinnedBuffer> host;
  typename Api::Stream stream;
  typename Api::Event kernel_start, kernel_stop;
  int begin = 0, end = 0;             // systems [begin, end) in flight; empty when equal
  std::vector<std::int32_t> slot_of;  // chunk-local trajectory slot -> the caller's slot
};

// Strided copy of `rows` rows of `count` elements: chunk arrays (pitch count) into batch-sized
// arrays (pitch total) starting at column `begin`.
template <class Api, class T>
void copy_rows(T* dst, int total, int begin, const T* src, int count, int rows,
               typename Api::Stream& stream) {
  if (rows == 0 || count == 0) return;
  Api::copy_2d(dst + begin, sizeof(T) * total, src, sizeof(T) * count, sizeof(T) * count,
               static_cast<std::size_t>(rows), stream);
}

// Host-side gather/scatter between the caller's batch-strided arrays and a chunk's packed ones.
template <class T>
void gather_rows(T* chunk, const T* batch, int total, int begin, int count, int rows) {
  for (int r = 0; r < rows; ++r)
    std::memcpy(chunk + static_cast<std::size_t>(r) * count,
                batch + static_cast<std::size_t>(r) * total + begin, sizeof(T) * count);
}
template <class T>
void scatter_rows(T* batch, int total, int begin, const T* chunk, int count, int rows) {
  for (int r = 0; r < rows; ++r)
    std::memcpy(batch + static_cast<std::size_t>(r) * total + begin,
                chunk + static_cast<std::size_t>(r) * count, sizeof(T) * count);
}

// The per-system results the statistics read, kept on the device for the whole batch.
template <class Api>
struct ResidentSummaries {
  typename Api::template DeviceBuffer<std::int32_t> status;
  typename Api::template DeviceBuffer<double> q, qd, residual_max, force_max;
  typename Api::template DeviceBuffer<std::int64_t> steps;

  void reserve(const ModelWidths& w, int total) {
    const auto c = static_cast<std::size_t>(total);
    grow(status, c);
    grow(q, c * w.n);
    grow(qd, c * w.n);
    grow(residual_max, c * w.residual_slots);
    grow(force_max, c);
    grow(steps, c);
  }
  static std::size_t bytes_per_system(const ModelWidths& w) {
    return sizeof(std::int32_t) + sizeof(std::int64_t) +
           sizeof(double) * static_cast<std::size_t>(2 * w.n + w.residual_slots + 1);
  }
  void append(const ModelWidths& w, int total, int begin, const BatchOutputView& chunk,
              typename Api::Stream& stream) {
    const int c = chunk.count;
    copy_rows<Api>(status.data(), total, begin, chunk.status, c, 1, stream);
    copy_rows<Api>(q.data(), total, begin, chunk.q, c, w.n, stream);
    copy_rows<Api>(qd.data(), total, begin, chunk.qd, c, w.n, stream);
    copy_rows<Api>(residual_max.data(), total, begin, chunk.residual_max, c, w.residual_slots,
                   stream);
    copy_rows<Api>(force_max.data(), total, begin, chunk.force_max, c, 1, stream);
    copy_rows<Api>(steps.data(), total, begin, chunk.steps, c, 1, stream);
  }
  ThrustStatisticsInput view(const ModelWidths& w, int total) const {
    ThrustStatisticsInput v;
    v.count = total;
    v.n = w.n;
    v.residual_slots = w.residual_slots;
    v.status = status.data();
    v.q = q.data();
    v.qd = qd.data();
    v.residual_max = residual_max.data();
    v.force_max = force_max.data();
    v.steps = steps.data();
    return v;
  }
};

}  // namespace ukes::device
