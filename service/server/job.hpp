// One submitted run: its validated spec, its result log, its state, and the streams following it.
// A durable job (a server with --data-dir) keeps its record in the job store up to date: when it
// ended, was fetched, or was asked to cancel (service/server/job_store.hpp).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "service/protocol/job_state.hpp"
#include "service/runspec/run_spec.hpp"
#include "service/server/job_store.hpp"
#include "service/server/result_log.hpp"
#include "ukes/v1/ukes.pb.h"

namespace ukes::server {

using Clock = std::chrono::steady_clock;

class Job {
 public:
  // `record`: the job as submitted, or as a restarted server found it in `store`, whose log
  // then holds `stored_chunks` chunks already, but for `missing` ones (ResultLog). `store` is
  // null for a memory-only job.
  Job(StoredJob record, RunSpec spec, int threads, std::unique_ptr<ChunkStorage> storage,
      MemoryBudget& budget, std::shared_ptr<JobStore> store = nullptr,
      std::int64_t stored_chunks = 0, std::set<std::int64_t> missing = {});
  ~Job();  // removes an expired durable job from the store

  const std::string& id() const { return record_.id; }
  // The principal that submitted it (service/server/auth.hpp); "" without authentication.
  const std::string& owner() const { return record_.owner; }
  const RunSpec& spec() const { return spec_; }
  const std::string& spec_json() const { return record_.spec_json; }
  double timeout_s() const { return record_.timeout_s; }
  bool system_summaries() const { return record_.system_summaries; }
  int threads() const { return threads_; }
  const ResultLog& log() const { return log_; }

  // A reopened durable job that runs again: where its stored slices ended (from their progress
  // reports), so that the run reproduces them chunk for chunk (ResultLog).
  void set_stored_slice_ends(std::vector<int> ends) { stored_slice_ends_ = std::move(ends); }
  const std::vector<int>& stored_slice_ends() const { return stored_slice_ends_; }

  // A run produces the log again from its first chunk (ResultLog::rewind).
  void rewind_log() { log_.rewind(); }

  // Frees the systems' inputs (parameters, initial conditions) once nothing will run them again;
  // the header's spec_json still describes them. Called by whoever took the job off the queue.
  void release_inputs();
  bool inputs_released() const { return inputs_released_; }
  // Takes the inputs of `fresh` (the job's spec parsed again), for a run after release_inputs.
  void restore_inputs(RunSpec fresh);

  // Appends a chunk and wakes every listener. `in_memory`: whatever the budget (ResultLog::append).
  void publish(ResultLog::Chunk chunk, bool in_memory = false);
  // A slice's chunks, stored together (all or none); `slice_end`: systems done after it.
  void publish(std::vector<ResultLog::Chunk> chunks, std::int64_t slice_end);

  // State. A job ends exactly once; its JobEnd chunk is published before ended() turns true.
  v1::JobState state() const;
  bool ended() const;
  void set_running();
  void end(v1::JobState state, const std::string& message, double elapsed_s,
           std::int64_t steps_total);
  // A reopened durable job whose log ends with its JobEnd: ended as that says.
  void restore_end(const v1::JobEnd& end);
  // Publishes the job's JobEnd again, for a run that repairs the log of an ended job (the log
  // takes it only where it fills a missing chunk).
  void republish_end();
  // What the job's results were stored with can no longer be had (its record failed its
  // checksum, or a run could not reproduce a missing chunk): a stream that reaches what is lost
  // ends with DATA_LOSS. `message` ends the job if it had not ended.
  void mark_data_lost(const std::string& message);
  bool data_lost() const;
  v1::Progress progress() const;
  void set_progress(const v1::Progress& p);
  std::string message() const;

  // Cancellation: the runner polls this flag (and passes it to the engine).
  void request_cancel(v1::JobState reason);
  const CancelFlag& cancel_flag() const { return cancel_; }
  v1::JobState cancel_reason() const;
  // Stops a durable job for a server shutdown without ending it: the next server on the data
  // directory runs it again.
  void request_suspend();
  bool suspended() const;
  // A run that repairs an ended job's log stops on `flag`, which request_suspend also requests
  // (null: no such run).
  void set_repair_stop(CancelFlag* flag);
  // Called (no lock held) when a reader finds a stored chunk corrupt (ResultLog::on_missing).
  void on_missing_chunk(std::function<void()> listener) { log_.on_missing(std::move(listener)); }
  // Dropped by the watchdog: the store forgets it once the last stream lets go of it.
  void mark_expired() { expired_ = true; }

  // A client has received the last chunk.
  void mark_fetched();
  // When the job started running (Clock::time_point{} = not yet).
  Clock::time_point started_at() const;
  // When the job ended and when its last chunk was fetched (Clock::time_point{} = not yet).
  Clock::time_point ended_at() const;
  Clock::time_point fetched_at() const;

  // Listeners are called (on the publishing thread, no lock held) after every chunk and at the
  // end. A listener may still be called once after unsubscribe(): it must tolerate that.
  using Listener = std::function<void()>;
  std::int64_t subscribe(Listener listener);
  void unsubscribe(std::int64_t token);

 private:
  void notify();
  // Runs an update of the job's record in the store, if durable; a failure is logged (the job
  // in memory stays right; a restart may then run it again or forget a fetch).
  template <class Update>
  void remember(const char* what, Update update);

  const StoredJob record_;
  RunSpec spec_;  // inputs released once the job has run
  const int threads_;
  ResultLog log_;
  const std::shared_ptr<JobStore> store_;
  std::vector<int> stored_slice_ends_;
  std::atomic<bool> inputs_released_{false};
  std::atomic<bool> expired_{false};
  CancelFlag cancel_;

  mutable std::mutex mu_;  // guards the state below
  v1::JobState state_ = v1::JOB_STATE_QUEUED;
  v1::JobState cancel_reason_ = v1::JOB_STATE_CANCELLED;
  bool suspended_ = false;
  bool suspend_asked_ = false;  // by a server shutdown, for an ended job too
  bool data_lost_ = false;
  CancelFlag* repair_stop_ = nullptr;
  v1::JobEnd end_;  // as published
  std::string message_;
  v1::Progress progress_;
  Clock::time_point started_at_{}, ended_at_{}, fetched_at_{};

  std::mutex listeners_mu_;
  std::map<std::int64_t, Listener> listeners_;
  std::int64_t next_token_ = 1;
};

}  // namespace ukes::server
