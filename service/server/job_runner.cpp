#include "service/server/job_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <string>
#include <vector>

#include "kernels/backend/gpu/gpu_backend.hpp"
#include "kernels/ensemble/statistics.hpp"
#include "service/protocol/model_proto.hpp"
#include "service/protocol/result_chunks.hpp"
#include "service/server/log.hpp"

namespace ukes::server {

namespace {

// Copies the final values of `part` (systems offset .. offset + part.count - 1) into `all`.
void copy_finals(const BatchResults& part, int offset, BatchResults& all) {
  const auto rows = [&](const std::vector<double>& src, std::vector<double>& dst, int width) {
    for (int r = 0; r < width; ++r)
      std::copy(src.begin() + static_cast<std::ptrdiff_t>(r) * part.count,
                src.begin() + static_cast<std::ptrdiff_t>(r + 1) * part.count,
                dst.begin() + static_cast<std::ptrdiff_t>(r) * all.count + offset);
  };
  rows(part.q, all.q, part.n);
  rows(part.qd, all.qd, part.n);
  rows(part.residual_max, all.residual_max, part.residual_slots);
  rows(part.t, all.t, 1);
  rows(part.force_max, all.force_max, 1);
  rows(part.inconsistency_max, all.inconsistency_max, 1);
  std::copy(part.status.begin(), part.status.end(), all.status.begin() + offset);
  std::copy(part.steps.begin(), part.steps.end(), all.steps.begin() + offset);
  std::copy(part.rejected.begin(), part.rejected.end(), all.rejected.begin() + offset);
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Where a job's slices run. A GPU that breaks under an `auto` job hands that slice, and the rest
// of the job, to the CPU; `note` then says so in the job's end message.
struct SliceDevice {
  Device device = Device::kCpu;
  std::string note;

  void run(const Job& job, int first, const Batch& batch, const EnsembleSettings& settings,
           const std::vector<std::int32_t>& recorded, BatchResults& part) {
    if (device == Device::kGpu) {
      try {
        run_ensemble_gpu(batch, settings, part, recorded, false);
        return;
      } catch (const GpuUnusableError& e) {
        if (job.spec().device != Device::kAuto) throw;
        log_event(LogLevel::kWarning, "job_gpu_fallback",
                  {{"job", job.id()}, {"first_system", first}, {"error", e.what()}});
        note = "systems from " + std::to_string(first) + " on ran on the CPU: " + e.what();
        device = Device::kCpu;
      }
    }
    run_ensemble_cpu(batch, settings, part, recorded);
  }
};

}  // namespace

std::int64_t slice_bytes_for(std::int64_t memory_budget) {
  // 64 MiB holds about 200,000 SCARA systems: the GPU wants slices that large (on the CPU the
  // runner's time target keeps them far smaller).
  return std::clamp<std::int64_t>(memory_budget / 4, std::int64_t{64} << 10,
                                  std::int64_t{64} << 20);
}

JobMemory job_memory(const RunSpec& spec, std::int64_t slice_bytes) {
  const ModelInfo& m = *spec.model;
  const std::int64_t n = m.n, slots = m.residual_slots();
  const auto params = static_cast<std::int64_t>(m.params.size());
  JobMemory mem;
  mem.slice = slice_bytes;
  // BatchResults::allocate: t, q, qd, residual maxima, force and inconsistency maxima (double),
  // steps and rejected (int64), status and trajectory slot (int32).
  const std::int64_t results = 8 * (2 * n + slots + 3) + 16 + 8;
  mem.finals = static_cast<std::int64_t>(spec.batch.count) * results;
  mem.per_system = 8 * (params + 2 * n) + 2 * results;
  const std::int64_t fields = 3 * n + slots;
  mem.trajectory = 2 * 8 * fields * static_cast<std::int64_t>(spec.output.samples);
  // The module pins at most slice_bytes (run_job's pinned budget), or one granule of systems
  // where a slice is smaller: their mirrors hold a little more per system than a slice does.
  if (spec.device_resolved == Device::kGpu) mem.pinned = 2 * slice_bytes;
  return mem;
}

void publish_header(Job& job, const std::string& backend) {
  const RunSpec& spec = job.spec();
  ResultLog::Chunk chunk;
  v1::JobHeader* h = chunk.mutable_header();
  h->set_job_id(job.id());
  model_to_proto(*spec.model, h->mutable_model());
  h->set_spec_json(job.spec_json());
  h->set_count(spec.batch.count);
  h->set_backend(backend);
  h->set_precision(precision_name(spec.settings.precision));
  h->set_method(method_name(spec.settings.method));
  h->set_t0(spec.settings.t0);
  h->set_t_end(spec.settings.t_end);
  for (double t : sample_times(spec.settings)) h->add_sample_times(t);
  for (auto id : spec.output.trajectory_ids) h->add_trajectory_ids(id);
  const OutputSpec& o = spec.output;
  const std::pair<bool, std::string> fields[] = {
      {o.q, "q"}, {o.qd, "qd"}, {o.residual, "residual"}, {o.force, "force"}};
  for (const auto& [on, name] : fields)
    if (on) h->add_fields(name);
  h->set_residual_slots(spec.model->residual_slots());
  h->set_system_summaries(job.system_summaries());
  h->set_threads(job.threads());
  // In memory whatever the budget (it is bounded, check_header_size): with the disk full and the
  // budget spent, SubmitJob must still succeed, not fail INTERNAL on a spill write.
  job.publish(std::move(chunk), /*in_memory=*/true);
}

void run_job(Job& job, double chunk_target_s, std::int64_t slice_bytes) {
  const RunSpec& spec = job.spec();
  const int count = spec.batch.count;
  const auto start = Clock::now();
  job.set_running();
  log_event(LogLevel::kInfo, "job_started",
            {{"job", job.id()}, {"model", spec.model->name}, {"systems", count}});

  std::int64_t steps_total = 0;
  int done = 0;
  try {
    BatchResults all;
    all.allocate(spec.batch, spec.settings.samples, {});
    EnsembleSettings settings = spec.settings;
    settings.threads = job.threads();
    settings.cancel = &job.cancel_flag();
    settings.gpu_pinned_budget = static_cast<std::size_t>(slice_bytes);  // job_memory counts it
    // Slices stay within slice_bytes: so many systems, and so many recorded ones.
    const JobMemory mem = job_memory(spec, slice_bytes);
    const int max_chunk =
        static_cast<int>(std::clamp<std::int64_t>(slice_bytes / mem.per_system, 1, 1 << 20));
    const auto max_recorded =
        static_cast<std::size_t>(std::max<std::int64_t>(1, slice_bytes / mem.trajectory));
    std::vector<std::int32_t> recorded = spec.output.trajectory_ids;
    std::sort(recorded.begin(), recorded.end());
    SliceDevice device{spec.device_resolved, ""};
    // On the CPU: start small so the first progress report comes quickly, then aim at
    // chunk_target_s. On the GPU a slice below kGpuMinSlice systems would leave most of the
    // device idle, so slices are at least that (or the whole job), progress reports or not.
    const auto smallest_slice = [&] {
      const int wanted =
          device.device == Device::kGpu ? kGpuMinSlice : 16 * std::max(1, job.threads());
      return std::min(max_chunk, wanted);
    };
    int chunk = smallest_slice();
    while (done < count && !job.cancel_flag().requested()) {
      if (job.timeout_s() > 0 && seconds_since(start) > job.timeout_s()) {
        job.request_cancel(v1::JOB_STATE_DEADLINE_EXCEEDED);
        break;
      }
      int end = static_cast<int>(std::min<std::int64_t>(count, std::int64_t{done} + chunk));
      const auto first_recorded = static_cast<std::size_t>(
          std::lower_bound(recorded.begin(), recorded.end(), done) - recorded.begin());
      if (recorded.size() - first_recorded > max_recorded)
        end = std::min(end, static_cast<int>(recorded[first_recorded + max_recorded]));
      std::vector<std::int32_t> local_ids;
      for (auto id : spec.output.trajectory_ids)
        if (id >= done && id < end) local_ids.push_back(id - done);
      const Batch part_batch = batch_slice(spec, done, end - done);
      BatchResults part;
      const auto chunk_start = Clock::now();
      device.run(job, done, part_batch, settings, local_ids, part);
      if (job.cancel_flag().requested()) break;  // this chunk may be incomplete: drop it
      const double chunk_s = seconds_since(chunk_start);

      copy_finals(part, done, all);
      for (auto s : part.steps) steps_total += s;
      if (job.system_summaries())
        for (auto& c : summary_chunks(part_batch, part, done)) {
          ResultLog::Chunk out;
          *out.mutable_summaries() = std::move(c);
          job.publish(std::move(out));
        }
      for (auto& c : trajectory_chunks(part, done, spec.output)) {
        ResultLog::Chunk out;
        *out.mutable_trajectory() = std::move(c);
        job.publish(std::move(out));
      }
      done = end;

      const double elapsed = seconds_since(start);
      ResultLog::Chunk out;
      v1::Progress* p = out.mutable_progress();
      p->set_systems_done(done);
      p->set_systems_total(count);
      p->set_steps_done(steps_total);
      p->set_elapsed_s(elapsed);
      p->set_system_steps_per_s(elapsed > 0 ? static_cast<double>(steps_total) / elapsed : 0.0);
      p->set_eta_s(done > 0 ? elapsed * (count - done) / done : -1.0);
      job.set_progress(*p);
      job.publish(std::move(out));

      const double scale = chunk_s > 1e-6 ? chunk_target_s / chunk_s : 4.0;
      chunk = static_cast<int>(
          std::clamp(chunk * std::min(scale, 4.0), double(smallest_slice()), double(max_chunk)));
    }
    if (done == count && !job.cancel_flag().requested()) {
      ResultLog::Chunk out;
      statistics_to_proto(ensemble_statistics(all), out.mutable_statistics());
      job.publish(std::move(out));
      const double elapsed = seconds_since(start);
      job.end(v1::JOB_STATE_SUCCEEDED, device.note, elapsed, steps_total);
      log_event(LogLevel::kInfo, "job_succeeded",
                {{"job", job.id()},
                 {"systems", count},
                 {"elapsed_s", elapsed},
                 {"steps", steps_total},
                 {"memory_bytes", job.log().memory_bytes()},
                 {"spilled_bytes", job.log().spilled_bytes()}});
      return;
    }
    const v1::JobState reason = job.cancel_reason();
    std::string message = reason == v1::JOB_STATE_DEADLINE_EXCEEDED ? "timeout" : "cancelled";
    message.append(" after ").append(std::to_string(done));
    message.append(" of ").append(std::to_string(count)).append(" systems");
    job.end(reason, message, seconds_since(start), steps_total);
    log_event(LogLevel::kInfo, "job_stopped",
              {{"job", job.id()}, {"state", job_state_name(reason)}, {"systems_done", done}});
  } catch (const std::exception& e) {
    log_event(LogLevel::kError, "job_failed", {{"job", job.id()}, {"error", e.what()}});
    try {
      job.end(v1::JOB_STATE_FAILED, e.what(), seconds_since(start), steps_total);
    } catch (const std::exception& e2) {
      // Even the end chunk could not be stored (spill failure): end without it.
      log_event(LogLevel::kError, "job_end_lost", {{"job", job.id()}, {"error", e2.what()}});
    }
  }
}

}  // namespace ukes::server
