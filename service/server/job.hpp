// One submitted run: its validated spec, its result log, its state, and the streams following it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "service/protocol/job_state.hpp"
#include "service/runspec/run_spec.hpp"
#include "service/server/result_log.hpp"
#include "ukes/v1/ukes.pb.h"

namespace ukes::server {

using Clock = std::chrono::steady_clock;

class Job {
 public:
  Job(std::string id, RunSpec spec, std::string spec_json, double timeout_s, bool system_summaries,
      int threads, const std::string& spill_path, MemoryBudget& budget, std::string owner = {});

  const std::string& id() const { return id_; }
  // The principal that submitted it (service/server/auth.hpp); "" without authentication.
  const std::string& owner() const { return owner_; }
  const RunSpec& spec() const { return spec_; }
  const std::string& spec_json() const { return spec_json_; }
  double timeout_s() const { return timeout_s_; }
  bool system_summaries() const { return system_summaries_; }
  int threads() const { return threads_; }
  const ResultLog& log() const { return log_; }

  // Frees the systems' inputs (parameters, initial conditions) once nothing will run them again;
  // the header's spec_json still describes them. Called by whoever took the job off the queue.
  void release_inputs();

  // Appends a chunk and wakes every listener. `in_memory`: whatever the budget (ResultLog::append).
  void publish(ResultLog::Chunk chunk, bool in_memory = false);

  // State. A job ends exactly once; its JobEnd chunk is published before ended() turns true.
  v1::JobState state() const;
  bool ended() const;
  void set_running();
  void end(v1::JobState state, const std::string& message, double elapsed_s,
           std::int64_t steps_total);
  v1::Progress progress() const;
  void set_progress(const v1::Progress& p);
  std::string message() const;

  // Cancellation: the runner polls this flag (and passes it to the engine).
  void request_cancel(v1::JobState reason);
  const CancelFlag& cancel_flag() const { return cancel_; }
  v1::JobState cancel_reason() const;

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

  const std::string id_;
  const std::string owner_;
  RunSpec spec_;  // inputs released once the job has run
  const std::string spec_json_;
  const double timeout_s_;
  const bool system_summaries_;
  const int threads_;
  ResultLog log_;
  CancelFlag cancel_;

  mutable std::mutex mu_;  // guards the state below
  v1::JobState state_ = v1::JOB_STATE_QUEUED;
  v1::JobState cancel_reason_ = v1::JOB_STATE_CANCELLED;
  std::string message_;
  v1::Progress progress_;
  Clock::time_point started_at_{}, ended_at_{}, fetched_at_{};

  std::mutex listeners_mu_;
  std::map<std::int64_t, Listener> listeners_;
  std::int64_t next_token_ = 1;
};

}  // namespace ukes::server
