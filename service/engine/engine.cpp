#include "service/engine/engine.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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

// How many systems the next slice takes: from the smallest (quick first reports; on the GPU
// enough to fill it) growing at most 4x a slice towards slice_target_s of work, within its share
// of slice_bytes, and never more recorded trajectories than fit in that share. A round holds
// `lanes` slices (one per GPU) and kSlicesAlive rounds are alive at once, so a slice's share is
// slice_bytes / (kSlicesAlive lanes).
class SliceSizer {
 public:
  static std::int64_t per_slice(const ExecuteOptions& options, int lanes) {
    return options.slice_bytes / kSlicesAlive / lanes;
  }

  SliceSizer(const RunSpec& spec, const ExecuteOptions& options, SliceCosts costs, int lanes)
      : spec_(spec),
        target_s_(options.slice_target_s),
        max_slice_(static_cast<int>(
            std::clamp<std::int64_t>(per_slice(options, lanes) / costs.per_system, 1, 1 << 20))),
        max_recorded_(static_cast<std::size_t>(
            std::max<std::int64_t>(1, per_slice(options, lanes) / costs.per_trajectory))),
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
  // How many of the `left` systems the next round may take, given what a system costs to
  // integrate and to hand on (seconds; 0: not measured yet). Nothing after the last round hides
  // its hand-on (a server encodes, stores and streams it), so near the end rounds shrink: each
  // leaves as many systems as integrate while it is handed on, and at least half of what is left
  // when handing on is the slower (the worker is then the bottleneck, and halving bounds the
  // extra rounds). A round never leaves fewer than `smallest` systems behind it, which would
  // waste a round (on the GPU, a slice too small to fill it takes as long as a full one), and
  // the rest is not split when handing all of it on takes less than integrating such a round.
  static int tail_round(int left, double integrate_s, double hand_on_s, int smallest) {
    if (integrate_s <= 0.0 || left * hand_on_s <= smallest * integrate_s) return left;
    const double share = integrate_s / (integrate_s + std::min(hand_on_s, integrate_s));
    const int take = std::max(smallest, static_cast<int>(std::ceil(left * share)));
    return left - take < smallest ? left : take;
  }

 private:
  const RunSpec& spec_;
  double target_s_;
  int max_slice_;
  std::size_t max_recorded_;
  std::vector<std::int32_t> recorded_;
};

// A slice, systems [first, end): its inputs, then its results on their way to the run's results
// and the caller.
struct IntegratedSlice {
  int first = 0;
  int end = 0;
  std::vector<std::int32_t> recorded;  // its recorded systems, as ids local to it
  Batch batch;
  BatchResults results;
};
using Round = std::vector<std::shared_ptr<IntegratedSlice>>;

// Where the slices run: on the CPU one at a time, or on the run's GPUs (device_ids, else every
// usable one) in rounds of one slice per GPU at once, each GPU taking the round's next slice when
// it is done with one. A system's results depend on nothing but its inputs, so which GPU ran it
// changes no bit. A GPU that breaks (GpuUnusableError) fails a `gpu` run; under `auto` its slice
// and the rest of the run go to the other GPUs, and to the CPU when none is left.
class SliceDevices {
 public:
  SliceDevices(const RunSpec& spec, RunOutcome& out)
      : may_fall_back_(spec.device == Device::kAuto), out_(out) {
    if (spec.device_resolved != Device::kGpu) return;
    gpus_ = spec.device_ids.empty() ? usable_gpu_devices() : spec.device_ids;
    if (gpus_.empty()) gpus_ = {0};  // lost since the spec was parsed: the run says so
  }

  bool on_gpu() const { return !gpus_.empty(); }
  Device device() const { return on_gpu() ? Device::kGpu : Device::kCpu; }
  // Slices a round runs at once.
  int lanes() const { return std::max<int>(1, static_cast<int>(gpus_.size())); }

  void run(Round& round, const EnsembleSettings& settings) {
    std::vector<std::size_t> pending(round.size());
    for (std::size_t k = 0; k < round.size(); ++k) pending[k] = k;
    while (!pending.empty() && on_gpu()) pending = run_on_gpus(round, pending, settings);
    for (const std::size_t k : pending) {
      IntegratedSlice& s = *round[k];
      run_ensemble_cpu(s.batch, settings, s.results, s.recorded);
    }
  }

 private:
  // Runs the pending slices of `round` on the GPUs, one lane per GPU (the first on this thread);
  // returns, in system order, those of GPUs lost under `auto`, and drops the lost GPUs.
  std::vector<std::size_t> run_on_gpus(Round& round, const std::vector<std::size_t>& pending,
                                       const EnsembleSettings& settings) {
    struct Loss {
      int gpu = 0;
      std::string error;
      int first = 0;  // of the slice it was running
    };
    // The pinned budget is the run's: each GPU's context pins its share.
    EnsembleSettings per_gpu = settings;
    per_gpu.gpu_pinned_budget /= gpus_.size();
    std::atomic<std::size_t> next{0};
    std::mutex mutex;  // guards the rest
    std::vector<std::size_t> again;
    std::vector<Loss> losses;
    std::exception_ptr failure;
    const auto lane = [&](int gpu) {
      std::size_t at = next++;
      for (; at < pending.size(); at = next++) {
        IntegratedSlice& s = *round[pending[at]];
        try {
          const GpuRunReport report =
              run_ensemble_gpu(s.batch, per_gpu, s.results, s.recorded, false, gpu);
          const std::lock_guard lock(mutex);
          out_.gpu_kernel = report.kernel;
        } catch (const GpuUnusableError& e) {
          const std::lock_guard lock(mutex);
          if (!may_fall_back_ && !failure) failure = std::current_exception();
          again.push_back(pending[at]);
          losses.push_back({gpu, e.what(), s.first});
          return;  // this GPU takes no more
        } catch (...) {
          const std::lock_guard lock(mutex);
          if (!failure) failure = std::current_exception();
          next = pending.size();  // the other lanes start nothing new
          return;
        }
      }
    };
    {
      std::vector<std::jthread> others;
      for (std::size_t g = 1; g < gpus_.size() && g < pending.size(); ++g)
        others.emplace_back(lane, gpus_[g]);
      lane(gpus_[0]);
    }
    if (failure) std::rethrow_exception(failure);
    for (const Loss& loss : losses) std::erase(gpus_, loss.gpu);
    std::sort(again.begin(), again.end());
    for (std::size_t k = 0; k < losses.size(); ++k) {
      const Loss& loss = losses[k];
      if (gpus_.empty() && k + 1 == losses.size()) {  // the last GPU: the CPU takes over
        out_.fallback_reason = loss.error;
        out_.fallback_from = round[again.front()]->first;
      } else {
        if (!out_.gpu_loss.empty()) out_.gpu_loss += "; ";
        out_.gpu_loss += "GPU " + std::to_string(loss.gpu) + " was lost at system " +
                         std::to_string(loss.first) + ", its slices went to the other GPUs (" +
                         loss.error + ")";
      }
    }
    return again;
  }

  bool may_fall_back_;
  RunOutcome& out_;
  std::vector<int> gpus_;  // the GPUs still in use; empty: the CPU
};

// What happens to an integrated slice: its results (and recorded trajectories) are copied into
// the run's and its steps counted, then on_slice is called. On the run's worker thread, but for
// the last round's copies (see execute).
struct SliceFinisher {
  const ExecuteOptions& options;
  RunOutcome& out;
  Clock::time_point start;
  std::int64_t steps = 0;  // of the slices copied so far
  // The worker's seconds and systems since the last worker_cost_per_system(), for the tail.
  double worker_s = 0.0;
  std::int64_t worker_systems = 0;

  // Returns the steps of the slices copied so far, s included.
  std::int64_t copy(IntegratedSlice& s) {
    copy_results(out.results.view(), s.first, s.results.view(), 0, s.results.count,
                 s.results.shape());
    if (options.keep_trajectories) copy_trajectories(s.results, s.first, out.results);
    for (auto slice_steps : s.results.steps) steps += slice_steps;
    return steps;
  }
  void hand_on(IntegratedSlice& s, std::int64_t steps_done) const {
    if (options.on_slice)
      options.on_slice(
          SliceDone{s.first, s.batch, s.results, s.end, steps_done, seconds_since(start)});
  }
  // On the worker: both, timed.
  void finish_off(IntegratedSlice& s) {
    const auto t0 = Clock::now();
    hand_on(s, copy(s));
    worker_s += seconds_since(t0);
    worker_systems += s.end - s.first;
  }
  // Seconds per system the worker took since the last call (0 if it finished nothing); only
  // while the worker is idle.
  double worker_cost_per_system() {
    const double cost = worker_systems > 0 ? worker_s / double(worker_systems) : 0.0;
    worker_s = 0.0;
    worker_systems = 0;
    return cost;
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
      options.keep_trajectories ? spec.output.trajectory_ids : std::vector<std::int32_t>{},
      spec.settings.events);
  EnsembleSettings settings = spec.settings;
  settings.threads = options.threads > 0 ? options.threads : default_cpu_threads();
  settings.threads = std::clamp(settings.threads, 1, std::max(1, count));
  settings.cancel = options.cancel;
  if (options.cpu_isa) settings.cpu_isa = options.cpu_isa;
  settings.gpu_pinned_budget = options.gpu_pinned_budget;

  SliceDevices devices(spec, out);
  const SliceSizer sizer(spec, options, slice_costs(spec), devices.lanes());
  const auto stop_requested = [&] {
    return options.cancel != nullptr && options.cancel->requested();
  };
  int size = sizer.smallest(devices.device(), settings.threads);
  std::size_t slices = 0;  // slices given an end so far
  const auto next_end = [&](int first, int systems) {
    const std::size_t k = slices++;
    return k < options.slice_ends.size() && options.slice_ends[k] > first &&
                   options.slice_ends[k] <= count
               ? options.slice_ends[k]
               : sizer.end(first, systems);
  };
  double integrate_cost = 0.0, worker_cost = 0.0;  // seconds a system, as last measured
  // The round of slices from `first` on, one per lane while systems remain: `size` systems each,
  // or even shares of what the round may take when that is less (so that a small run still uses
  // every GPU; near the end, SliceSizer::tail_round); inputs not made yet.
  const auto plan = [&](int first) {
    Round round;
    const int lanes = devices.lanes();
    const int smallest = sizer.smallest(devices.device(), settings.threads);
    const int last = first + SliceSizer::tail_round(count - first, integrate_cost, worker_cost,
                                                    smallest * lanes);
    for (int lane = 0; lane < lanes && first < last; ++lane) {
      const int share = (last - first + (lanes - lane) - 1) / (lanes - lane);
      const int end = next_end(first, std::min(size, share));
      round.push_back(std::make_shared<IntegratedSlice>(
          IntegratedSlice{first, end, sizer.recorded_in(first, end), Batch{}, BatchResults{}}));
      first = end;
    }
    return round;
  };
  const auto make_inputs = [&spec](const Round& round) {
    for (const auto& s : round) s->batch = batch_slice(spec, s->first, s->end - s->first);
  };
  SliceFinisher finish{options, out, start};
  int first = 0;  // the systems before it are finished or with the worker
  {
    // The worker finishes each round's slices, and makes the next round's inputs, while a round
    // integrates: the integrating thread does no per-system work of its own. So a round's sizes
    // are set one round ahead, from the time of the round before the one integrating.
    SerialQueue worker;
    Round round = plan(0);
    make_inputs(round);
    while (!round.empty()) {
      if (stop_requested()) {
        out.end = RunEnd::kCancelled;
        break;
      }
      if (options.timeout_s > 0 && seconds_since(start) > options.timeout_s) {
        out.end = RunEnd::kTimedOut;
        break;
      }
      const int end = round.back()->end;
      Round next = plan(end);
      if (!next.empty()) worker.enqueue([&make_inputs, next] { make_inputs(next); });
      const auto round_start = Clock::now();
      devices.run(round, settings);
      const double round_s = seconds_since(round_start);
      integrate_cost = round_s / (end - round.front()->first);
      worker.synchronize();  // the round before, any stop its on_slice requested, next inputs
      worker_cost = finish.worker_cost_per_system();
      if (stop_requested()) {  // this round may be incomplete, or was not wanted: drop it
        out.end = RunEnd::kCancelled;
        break;
      }
      for (auto& slice : round) {
        out.backend = slice->results.backend;
        if (next.empty()) {
          // The last round: copied here (the worker is idle), so that the statistics can be
          // computed while the worker hands it on (a server encodes, stores and streams it).
          const std::int64_t steps = finish.copy(*slice);
          worker.enqueue([&finish, slice, steps] { finish.hand_on(*slice, steps); });
        } else {
          worker.enqueue([&finish, slice] { finish.finish_off(*slice); });
        }
      }
      size = sizer.next(size, round_s, sizer.smallest(devices.device(), settings.threads));
      first = end;
      round = std::move(next);
    }
    out.elapsed_s = seconds_since(start);
    if (out.end == RunEnd::kCompleted)
      out.statistics = ensemble_statistics(out.results, settings.threads);
    worker.synchronize();
  }
  out.steps = finish.steps;
  out.systems_done = first;
  out.threads = devices.device() == Device::kCpu ? settings.threads : 0;
  if (out.threads > 0) out.cpu_lanes = cpu_lanes_description(settings);
  if (out.backend.empty()) out.backend = device_name(devices.device());
  out.results.backend = out.backend;
  out.results.elapsed_s = out.elapsed_s;
  out.total_s = seconds_since(start);
  return out;
}

}  // namespace ukes
