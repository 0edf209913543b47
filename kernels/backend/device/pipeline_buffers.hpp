// The buffers of the GPU module's chunk pipeline (chunked_run.hpp), over any device API
// (device_api.hpp): a chunk's per-system arrays on the device and their pinned host mirrors, the
// two pipeline slots, and the per-system results kept on the device for the statistics. A
// process keeps them from run to run (device_context.hpp), so they only ever grow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/backend/thrust/statistics_input.hpp"
#include "kernels/ensemble/ensemble.hpp"

namespace ukes::device {

// Resizes `buffer` to hold at least `count` elements; contents are not kept when it grows.
template <class Buffer>
void grow(Buffer& buffer, std::size_t count) {
  if (buffer.size() < count) buffer.resize(count);
}

// Where each field of a chunk of `count` systems lives in a chunk's arena: the input fields of
// system_record.hpp packed [params | q0 | qd0][count] (doubles), and every result field at its own
// offset, each aligned to kFieldAlignment bytes, so one copy moves a chunk's results.
inline constexpr std::size_t kFieldAlignment = 256;

inline std::size_t aligned(std::size_t bytes) {
  return (bytes + kFieldAlignment - 1) / kFieldAlignment * kFieldAlignment;
}

// Bytes of the results of `count` systems, laid out as results_view lays them.
inline std::size_t results_arena_bytes(const RecordShape& shape, int count) {
  std::size_t bytes = 0;
  BatchOutputView none;
  for_each_result(
      [&](const FieldInfo& f, auto* field) {
        bytes += aligned(sizeof(*field) * static_cast<std::size_t>(shape(f.width)) *
                         static_cast<std::size_t>(count));
      },
      none);
  return bytes;
}

// The results of `count` systems in the arena at `base` (trajectory members left null).
inline BatchOutputView results_view(std::byte* base, const RecordShape& shape, int count) {
  BatchOutputView v;
  v.count = count;
  std::size_t offset = 0;
  for_each_result(
      [&](const FieldInfo& f, auto*& field) {
        using Value = std::remove_reference_t<decltype(*field)>;
        field = reinterpret_cast<Value*>(base + offset);
        offset += aligned(sizeof(Value) * static_cast<std::size_t>(shape(f.width)) *
                          static_cast<std::size_t>(count));
      },
      v);
  return v;
}

// Device (or pinned host) storage for up to `capacity` systems of one chunk.
template <template <class> class Buffer>
struct ChunkArrays {
  Buffer<double> inputs;      // [params | q0 | qd0][count]
  Buffer<std::byte> results;  // every result field (results_view)
  Buffer<std::int32_t> slot;  // [count], chunk-local trajectory slot or -1
#define UKES_TRAJECTORY_BUFFER(name, width, text) Buffer<double> traj_##name;
  UKES_TRAJECTORY_FIELDS(UKES_TRAJECTORY_BUFFER)  // [slot][sample][width]
#undef UKES_TRAJECTORY_BUFFER

  // Room for `capacity` systems of shape w, and `slots` trajectories of `samples` samples.
  void reserve(const RecordShape& w, int capacity, int slots, int samples) {
    const auto c = static_cast<std::size_t>(capacity);
    grow(inputs, c * input_bytes_per_system(w) / sizeof(double));
    grow(results, results_arena_bytes(w, capacity));
    grow(slot, c);
    const std::size_t per_slot = static_cast<std::size_t>(slots) * samples;
    for_each_trajectory(
        [&](const FieldInfo& f, auto& buffer) { grow(buffer, per_slot * w(f.width)); }, *this);
  }

  // Views of a chunk of `count` systems packed at the start of the buffers.
  BatchInputView input_view(const RecordShape& w, int count) const {
    BatchInputView v;
    v.count = count;
    const double* next = inputs.data();
    for_each_input(
        [&](const FieldInfo& f, const double*& field) {
          field = next;
          next += static_cast<std::size_t>(w(f.width)) * static_cast<std::size_t>(count);
        },
        v);
    return v;
  }
  BatchOutputView output_view(const RecordShape& w, int count) const {
    BatchOutputView v = results_view(results.data(), w, count);
    v.traj_slot = slot.data();
    for_each_trajectory(
        [](const FieldInfo&, double*& field, const auto& buffer) { field = buffer.data(); }, v,
        *this);
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

// Host-side gather from the caller's batch-strided arrays into a chunk's packed ones.
template <class T>
void gather_rows(T* chunk, const T* batch, int total, int begin, int count, int rows) {
  for (int r = 0; r < rows; ++r)
    std::memcpy(chunk + static_cast<std::size_t>(r) * count,
                batch + static_cast<std::size_t>(r) * total + begin, sizeof(T) * count);
}
// The per-system results the statistics read, kept on the device for the whole batch.
template <class Api>
struct ResidentSummaries {
  typename Api::template DeviceBuffer<std::int32_t> status;
  typename Api::template DeviceBuffer<double> q, qd, residual_max;
#define UKES_RESIDENT_SCALAR(name, encoding) \
  typename Api::template DeviceBuffer<Storage<Encoding::encoding>> name;
  UKES_SUMMARIZED_SCALARS(UKES_RESIDENT_SCALAR)
#undef UKES_RESIDENT_SCALAR

  void reserve(const RecordShape& w, int total) {
    const auto c = static_cast<std::size_t>(total);
    grow(status, c);
    grow(q, c * w.n);
    grow(qd, c * w.n);
    grow(residual_max, c * w.residual_slots);
#define UKES_GROW_SCALAR(name, encoding) grow(name, c);
    UKES_SUMMARIZED_SCALARS(UKES_GROW_SCALAR)
#undef UKES_GROW_SCALAR
  }
  static std::size_t bytes_per_system(const RecordShape& w) {
    std::size_t scalars = 0;
#define UKES_SCALAR_BYTES(name, encoding) scalars += sizeof(Storage<Encoding::encoding>);
    UKES_SUMMARIZED_SCALARS(UKES_SCALAR_BYTES)
#undef UKES_SCALAR_BYTES
    return sizeof(std::int32_t) +
           sizeof(double) * static_cast<std::size_t>(2 * w.n + w.residual_slots) + scalars;
  }
  void append(const RecordShape& w, int total, int begin, const BatchOutputView& chunk,
              typename Api::Stream& stream) {
    const int c = chunk.count;
    copy_rows<Api>(status.data(), total, begin, chunk.status, c, 1, stream);
    copy_rows<Api>(q.data(), total, begin, chunk.q, c, w.n, stream);
    copy_rows<Api>(qd.data(), total, begin, chunk.qd, c, w.n, stream);
    copy_rows<Api>(residual_max.data(), total, begin, chunk.residual_max, c, w.residual_slots,
                   stream);
#define UKES_APPEND_SCALAR(name, encoding) \
  copy_rows<Api>(name.data(), total, begin, chunk.name, c, 1, stream);
    UKES_SUMMARIZED_SCALARS(UKES_APPEND_SCALAR)
#undef UKES_APPEND_SCALAR
  }
  ThrustStatisticsInput view(const RecordShape& w, int total) const {
    ThrustStatisticsInput v;
    v.count = total;
    v.n = w.n;
    v.residual_slots = w.residual_slots;
    v.status = status.data();
    v.q = q.data();
    v.qd = qd.data();
    v.residual_max = residual_max.data();
#define UKES_VIEW_SCALAR(name, encoding) v.name = name.data();
    UKES_SUMMARIZED_SCALARS(UKES_VIEW_SCALAR)
#undef UKES_VIEW_SCALAR
    return v;
  }
};

}  // namespace ukes::device
