#include "service/engine/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/backend/cpu/cpu_backend.hpp"
#include "kernels/backend/gpu/gpu_backend.hpp"
#include "kernels/core/serial_queue.hpp"

namespace ukes {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Where the slices run. A GPU that breaks under an `auto` run hands that slice, and the rest of
// the run, to the CPU.
struct SliceDevice {
  Device device = Device::kCpu;
  bool may_fall_back = false;
  RunOutcome& out;

  void run(int first, const Batch& batch, const EnsembleSettings& settings,
           const std::vector<std::int32_t>& recorded, BatchResults& part) {
    if (device == Device::kGpu) {
      try {
        out.gpu_kernel = run_ensemble_gpu(batch, settings, part, recorded, false).kernel;
        return;
      } catch (const GpuUnusableError& e) {
        if (!may_fall_back) throw;
        out.fallback_reason = e.what();
        out.fallback_from = first;
        device = Device::kCpu;
      }
    }
    run_ensemble_cpu(batch, settings, part, recorded);
  }
};

// How many systems the next slice takes: from the smallest (quick first reports; on the GPU
// enough to fill it) growing at most 4x a slice towards slice_target_s of work, within its share
// of slice_bytes, and never more recorded trajectories than fit in that share.
class SliceSizer {
 public:
  static std::int64_t per_slice(const ExecuteOptions& options) {
    return options.slice_bytes / kSlicesAlive;
  }

  SliceSizer(const RunSpec& spec, const ExecuteOptions& options, SliceCosts costs)
      : spec_(spec),
        target_s_(options.slice_target_s),
        max_slice_(static_cast<int>(
            std::clamp<std::int64_t>(per_slice(options) / costs.per_system, 1, 1 << 20))),
        max_recorded_(static_cast<std::size_t>(
            std::max<std::int64_t>(1, per_slice(options) / costs.per_trajectory))),
        recorded_(spec.output.trajectory_ids) {
    std::sort(recorded_.begin(), recorded_.end());
  }

  int smallest(Device device, int threads) const {
    return std::min(max_slice_, device == Device::kGpu ? kGpuMinSlice : 16 * threads);
  }
  // The end of the slice that starts at `first` and would take `size` systems.
  int end(int first, int size) const {
    int end =
        static_cast<int>(std::min<std::int64_t>(spec_.batch.count, std::int64_t{first} + size));
    const auto at = static_cast<std::size_t>(
        std::lower_bound(recorded_.begin(), recorded_.end(), first) - recorded_.begin());
    if (recorded_.size() - at > max_recorded_)
      end = std::min(end, static_cast<int>(recorded_[at + max_recorded_]));
    return end;
  }
  // The recorded systems among [first, end), as ids local to the slice, in the spec's order.
  std::vector<std::int32_t> recorded_in(int first, int end) const {
    std::vector<std::int32_t> local;
    for (auto id : spec_.output.trajectory_ids)
      if (id >= first && id < end) local.push_back(id - first);
    return local;
  }
  // The next slice's size after one of `size` systems took `seconds`.
  int next(int size, double seconds, int smallest) const {
    const double scale = seconds > 1e-6 ? target_s_ / seconds : 4.0;
    return static_cast<int>(
        std::clamp(size * std::min(scale, 4.0), double(smallest), double(max_slice_)));
  }

 private:
  const RunSpec& spec_;
  double target_s_;
  int max_slice_;
  std::size_t max_recorded_;
  std::vector<std::int32_t> recorded_;
};

// An integrated slice, systems [first, end), on its way to the run's results and the caller.
struct IntegratedSlice {
  int first = 0;
  int end = 0;
  Batch batch;
  BatchResults results;
};

// What happens to an integrated slice, on the run's worker thread: its results (and recorded
// trajectories) are copied into the run's, its steps counted, and on_slice called.
struct SliceFinisher {
  const ExecuteOptions& options;
  RunOutcome& out;
  Clock::time_point start;
  std::int64_t steps = 0;  // of the slices finished so far

  void operator()(IntegratedSlice& s) {
    copy_results(out.results.view(), s.first, s.results.view(), 0, s.results.count,
                 s.results.shape());
    if (options.keep_trajectories) copy_trajectories(s.results, s.first, out.results);
    for (auto slice_steps : s.results.steps) steps += slice_steps;
    if (options.on_slice)
      options.on_slice(SliceDone{s.first, s.batch, s.results, s.end, steps, seconds_since(start)});
  }
};

}  // namespace

SliceCosts slice_costs(const RunSpec& spec) {
  const RecordShape shape = record_shape(spec);
  // BatchResults::allocate: the result fields and the trajectory slot.
  const auto results = static_cast<std::int64_t>(result_bytes_per_system(shape) + 4);
  SliceCosts costs;
  costs.finals = results;
  costs.per_system = static_cast<std::int64_t>(input_bytes_per_system(shape)) + 2 * results;
  costs.per_trajectory = 2 * static_cast<std::int64_t>(trajectory_bytes_per_sample(shape)) *
                         static_cast<std::int64_t>(spec.output.samples);
  return costs;
}

void copy_trajectories(const BatchResults& part, int offset, BatchResults& all) {
  const auto k = static_cast<std::size_t>(part.samples);
  const RecordShape shape = part.shape();
  for (std::size_t local = 0; local < part.traj_ids.size(); ++local) {
    const auto global = static_cast<std::size_t>(all.traj_slot[offset + part.traj_ids[local]]);
    for_each_trajectory(
        [&](const FieldInfo& f, const std::vector<double>& from, std::vector<double>& to) {
          const std::size_t block = k * static_cast<std::size_t>(shape(f.width));
          if (block > 0)
            std::memcpy(to.data() + global * block, from.data() + local * block,
                        sizeof(double) * block);
        },
        part, all);
  }
}

RunOutcome execute(const RunSpec& spec, const ExecuteOptions& options) {
  const auto start = Clock::now();
  const int count = spec.batch.count;
  RunOutcome out;
  out.results.allocate(
      spec.batch, spec.settings.samples,
      options.keep_trajectories ? spec.output.trajectory_ids : std::vector<std::int32_t>{});
  EnsembleSettings settings = spec.settings;
  settings.threads = options.threads > 0 ? options.threads : default_cpu_threads();
  settings.threads = std::clamp(settings.threads, 1, std::max(1, count));
  settings.cancel = options.cancel;
  settings.gpu_pinned_budget = options.gpu_pinned_budget;

  const SliceSizer sizer(spec, options, slice_costs(spec));
  SliceDevice device{spec.device_resolved, spec.device == Device::kAuto, out};
  const auto stop_requested = [&] {
    return options.cancel != nullptr && options.cancel->requested();
  };
  int size = sizer.smallest(device.device, settings.threads);
  std::size_t slices = 0;  // slices given an end so far
  const auto next_end = [&](int first) {
    const std::size_t k = slices++;
    return k < options.slice_ends.size() && options.slice_ends[k] > first &&
                   options.slice_ends[k] <= count
               ? options.slice_ends[k]
               : sizer.end(first, size);
  };
  SliceFinisher finish{options, out, start};
  int first = 0;  // the systems before it are finished or with the worker
  {
    // The worker finishes each slice, and makes the next slice's inputs, while a slice
    // integrates: the integrating thread does no per-system work of its own. So a slice's size
    // is set one slice ahead, from the time of the slice before the one integrating.
    SerialQueue worker;
    int end = count > 0 ? next_end(0) : 0;
    auto inputs = std::make_shared<Batch>(batch_slice(spec, first, end - first));
    while (first < count) {
      if (stop_requested()) {
        out.end = RunEnd::kCancelled;
        break;
      }
      if (options.timeout_s > 0 && seconds_since(start) > options.timeout_s) {
        out.end = RunEnd::kTimedOut;
        break;
      }
      const int after = end < count ? next_end(end) : end;
      auto next_inputs = std::make_shared<Batch>();
      if (after > end)
        worker.enqueue([&spec, next_inputs, end, after] {
          *next_inputs = batch_slice(spec, end, after - end);
        });
      auto slice = std::make_shared<IntegratedSlice>(
          IntegratedSlice{first, end, std::move(*inputs), BatchResults{}});
      const auto slice_start = Clock::now();
      device.run(first, slice->batch, settings, sizer.recorded_in(first, end), slice->results);
      const double slice_s = seconds_since(slice_start);
      worker.synchronize();    // the slice before, any stop its on_slice requested, next inputs
      if (stop_requested()) {  // this slice may be incomplete, or was not wanted: drop it
        out.end = RunEnd::kCancelled;
        break;
      }
      out.backend = slice->results.backend;
      worker.enqueue([&finish, slice] { finish(*slice); });
      size = sizer.next(size, slice_s, sizer.smallest(device.device, settings.threads));
      first = end;
      end = after;
      inputs = std::move(next_inputs);
    }
    worker.synchronize();
  }
  out.steps = finish.steps;
  out.systems_done = first;
  out.threads = device.device == Device::kCpu ? settings.threads : 0;
  if (out.backend.empty()) out.backend = device_name(device.device);
  out.results.backend = out.backend;
  out.elapsed_s = seconds_since(start);
  out.results.elapsed_s = out.elapsed_s;
  if (out.end == RunEnd::kCompleted) out.statistics = ensemble_statistics(out.results);
  out.total_s = seconds_since(start);
  return out;
}

}  // namespace ukes
