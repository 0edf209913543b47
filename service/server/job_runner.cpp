#include "service/server/job_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <string>
#include <vector>

#include "service/engine/engine.hpp"
#include "service/protocol/model_proto.hpp"
#include "service/protocol/result_chunks.hpp"
#include "service/server/log.hpp"

namespace ukes::server {

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

std::int64_t slice_bytes_for(std::int64_t memory_budget) {
  // kSlicesAlive slices (service/engine/engine.hpp), 64 MiB each at most: 64 MiB holds about
  // 200,000 SCARA systems, and the GPU wants slices that large (on the CPU the runner's time
  // target keeps them far smaller).
  return std::clamp<std::int64_t>(memory_budget / 4, std::int64_t{64} << 10,
                                  std::int64_t{kSlicesAlive * 64} << 20);
}

JobMemory job_memory(const RunSpec& spec, std::int64_t slice_bytes) {
  const SliceCosts costs = slice_costs(spec);
  JobMemory mem;
  mem.slice = slice_bytes;
  mem.finals = static_cast<std::int64_t>(spec.batch.count) * costs.finals;
  mem.per_system = costs.per_system;
  mem.trajectory = costs.per_trajectory;
  // The module pins at most one slice's share of slice_bytes (run_job's pinned budget), or one
  // granule of systems where a slice is smaller: their mirrors hold a little more per system
  // than a slice does.
  if (spec.device_resolved == Device::kGpu) mem.pinned = 2 * (slice_bytes / kSlicesAlive);
  return mem;
}

std::int64_t job_slice_bytes(const RunSpec& spec, std::int64_t memory_budget) {
  std::int64_t slice_bytes = slice_bytes_for(memory_budget);
  const std::int64_t least = kSlicesAlive * slice_costs(spec).per_system;
  while (slice_bytes > least && job_memory(spec, slice_bytes).total() > memory_budget)
    slice_bytes = std::max(least, slice_bytes / 4 * 3);
  return slice_bytes;
}

void publish_header(Job& job) {
  const RunSpec& spec = job.spec();
  ResultLog::Chunk chunk;
  v1::JobHeader* h = chunk.mutable_header();
  h->set_job_id(job.id());
  model_to_proto(*spec.model, h->mutable_model());
  h->set_spec_json(job.spec_json());
  h->set_count(spec.batch.count);
  h->set_backend(device_name(spec.device_resolved));
  h->set_precision(precision_name(spec.settings.precision));
  h->set_method(method_name(spec.settings.method));
  h->set_t0(spec.settings.t0);
  h->set_t_end(spec.settings.t_end);
  for (double t : sample_times(spec.settings)) h->add_sample_times(t);
  for (auto id : spec.output.trajectory_ids) h->add_trajectory_ids(id);
  const OutputSpec& o = spec.output;
  for (const std::string_view name : kTrajectoryNames)
    if (o.wants(name)) h->add_fields(std::string(name));
  h->set_residual_slots(spec.model->residual_slots());
  for (const std::string& name : spec.settings.event_names) h->add_events(name);
  h->set_event_records(spec.settings.events.records);
  h->set_system_summaries(job.system_summaries());
  h->set_threads(job.threads());
  // In memory whatever the budget (it is bounded, check_header_size), and in memory alone when
  // the disk is full: a job that could be accepted can always be followed to its end.
  job.publish(std::move(chunk), /*in_memory=*/true);
}

// Publishes what a finished slice adds to the job's results, together: its systems' summaries,
// the trajectories of the recorded ones, and a progress report.
void publish_slice(Job& job, const SliceDone& slice) {
  const RunSpec& spec = job.spec();
  std::vector<ResultLog::Chunk> chunks;
  if (job.system_summaries())
    for (auto& c : summary_chunks(slice.batch, slice.results, slice.first))
      *chunks.emplace_back().mutable_summaries() = std::move(c);
  for (auto& c : trajectory_chunks(slice.results, slice.first, spec.output))
    *chunks.emplace_back().mutable_trajectory() = std::move(c);
  v1::Progress* p = chunks.emplace_back().mutable_progress();
  *p = progress_after(slice, spec.batch.count);
  if (!job.ended()) job.set_progress(*p);  // a run repairing an ended job's log reports nothing
  job.publish(std::move(chunks), slice.systems_done);
}

namespace {

ExecuteOptions execute_options(const Job& job, double chunk_target_s, std::int64_t slice_bytes) {
  ExecuteOptions options;
  options.threads = job.threads();
  options.cancel = &job.cancel_flag();
  options.timeout_s = job.timeout_s();
  options.slice_target_s = chunk_target_s;
  options.slice_bytes = slice_bytes;
  options.gpu_pinned_budget = static_cast<std::size_t>(slice_bytes / kSlicesAlive);  // counted
  options.keep_trajectories = false;             // published slice by slice
  options.slice_ends = job.stored_slice_ends();  // a durable job run again: as stored
  return options;
}

void publish_statistics(Job& job, const RunOutcome& out) {
  ResultLog::Chunk chunk;
  statistics_to_proto(out.statistics, chunk.mutable_statistics());
  job.publish(std::move(chunk));
}

// The note a job's end carries about its run: systems that fell back to the CPU, chunks that
// differed from those stored before a restart.
std::string run_note(const Job& job, const RunOutcome& out) {
  std::string note;
  if (!out.fallback_reason.empty()) {
    log_event(
        LogLevel::kWarning, "job_gpu_fallback",
        {{"job", job.id()}, {"first_system", out.fallback_from}, {"error", out.fallback_reason}});
    note = "systems from " + std::to_string(out.fallback_from) +
           " on ran on the CPU: " + out.fallback_reason;
  }
  if (!out.gpu_loss.empty()) {
    log_event(LogLevel::kWarning, "job_gpu_lost", {{"job", job.id()}, {"error", out.gpu_loss}});
    note += (note.empty() ? "" : "; ") + out.gpu_loss;
  }
  if (const auto differed = job.log().replay_mismatches(); differed > 0) {
    log_event(LogLevel::kError, "job_rerun_differs", {{"job", job.id()}, {"chunks", differed}});
    note += (note.empty() ? "" : "; ") + std::string("run again after a restart, ") +
            std::to_string(differed) +
            " result chunks differed from those stored before (the stored ones are kept)";
  }
  return note;
}

// Runs an ended job again to fill the missing chunks of its log (ResultLog), from its header to
// its last stored slice, on a stop flag of its own (the job's was used up by its own end, if it
// was cancelled). Its statistics are published only if it succeeded, and its end again where
// missing.
void repair_log(Job& job, double chunk_target_s, std::int64_t slice_bytes) {
  const auto start = Clock::now();
  const std::int64_t missing_before = job.log().missing();
  const std::vector<int>& stored_ends = job.stored_slice_ends();
  CancelFlag stop;
  job.set_repair_stop(&stop);
  try {
    publish_header(job);
    if (job.log().missing() > 0 && !stored_ends.empty()) {
      ExecuteOptions options = execute_options(job, chunk_target_s, slice_bytes);
      options.cancel = &stop;
      options.timeout_s = 0.0;
      options.on_slice = [&](const SliceDone& slice) {
        publish_slice(job, slice);
        const bool past_stored =
            slice.systems_done >= stored_ends.back() && slice.systems_done < job.spec().batch.count;
        if (job.log().missing() == 0 || past_stored) stop.request();
      };
      const RunOutcome out = execute(job.spec(), options);
      if (out.end == RunEnd::kCompleted && job.state() == v1::JOB_STATE_SUCCEEDED)
        publish_statistics(job, out);
    }
    if (job.log().missing() > 0) job.republish_end();
  } catch (const std::exception& e) {
    log_event(LogLevel::kError, "job_repair_failed", {{"job", job.id()}, {"error", e.what()}});
  }
  job.set_repair_stop(nullptr);
  log_event(LogLevel::kInfo, "job_repaired",
            {{"job", job.id()},
             {"chunks_filled", missing_before - job.log().missing()},
             {"chunks_missing", job.log().missing()},
             {"chunks_differed", job.log().replay_mismatches()},
             {"elapsed_s", seconds_since(start)}});
}

// Ends a run that did not complete: suspended for a restart, or stopped (cancel, timeout).
void end_stopped(Job& job, const RunOutcome& out, double elapsed_s) {
  if (job.suspended()) {  // the server is going down: the next one runs the job again
    log_event(LogLevel::kInfo, "job_suspended",
              {{"job", job.id()}, {"systems_done", out.systems_done}});
    return;
  }
  if (out.end == RunEnd::kTimedOut) job.request_cancel(v1::JOB_STATE_DEADLINE_EXCEEDED);
  const v1::JobState reason = job.cancel_reason();
  std::string message = reason == v1::JOB_STATE_DEADLINE_EXCEEDED ? "timeout" : "cancelled";
  message.append(" after ").append(std::to_string(out.systems_done));
  message.append(" of ").append(std::to_string(job.spec().batch.count)).append(" systems");
  job.end(reason, message, elapsed_s, out.steps);
  log_event(
      LogLevel::kInfo, "job_stopped",
      {{"job", job.id()}, {"state", job_state_name(reason)}, {"systems_done", out.systems_done}});
}

}  // namespace

void run_job(Job& job, double chunk_target_s, std::int64_t slice_bytes) {
  // Every run produces the log from its header on: a run of a stored log (after a restart, or to
  // repair it) reproduces what is stored, chunk for chunk, and fills what is missing.
  job.rewind_log();
  if (job.ended()) return repair_log(job, chunk_target_s, slice_bytes);
  const RunSpec& spec = job.spec();
  const int count = spec.batch.count;
  const auto start = Clock::now();
  job.set_running();
  log_event(LogLevel::kInfo, "job_started",
            {{"job", job.id()}, {"model", spec.model->name}, {"systems", count}});

  std::int64_t steps_done = 0;
  try {
    publish_header(job);
    ExecuteOptions options = execute_options(job, chunk_target_s, slice_bytes);
    options.on_slice = [&](const SliceDone& slice) {
      steps_done = slice.steps_done;
      publish_slice(job, slice);
    };
    const RunOutcome out = execute(spec, options);
    if (!out.gpu_kernel.empty())
      log_event(LogLevel::kInfo, "job_gpu_kernel", {{"job", job.id()}, {"kernel", out.gpu_kernel}});
    if (out.end != RunEnd::kCompleted) return end_stopped(job, out, seconds_since(start));
    publish_statistics(job, out);
    const double elapsed = seconds_since(start);
    job.end(v1::JOB_STATE_SUCCEEDED, run_note(job, out), elapsed, out.steps);
    log_event(LogLevel::kInfo, "job_succeeded",
              {{"job", job.id()},
               {"systems", count},
               {"elapsed_s", elapsed},
               {"steps", out.steps},
               {"memory_bytes", job.log().memory_bytes()},
               {"spilled_bytes", job.log().spilled_bytes()}});
  } catch (const std::exception& e) {
    log_event(LogLevel::kError, "job_failed", {{"job", job.id()}, {"error", e.what()}});
    job.end(v1::JOB_STATE_FAILED, e.what(), seconds_since(start), steps_done);
  }
}

}  // namespace ukes::server
