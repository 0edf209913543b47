#include "service/server/job.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <vector>

#include "service/server/log.hpp"

namespace ukes::server {

namespace {

// The steady-clock time of a stored wall-clock time (0: none).
Clock::time_point from_unix(double unix_s) {
  if (unix_s <= 0) return {};
  const auto ago = std::chrono::duration<double>(std::max(0.0, unix_now() - unix_s));
  return Clock::now() - std::chrono::duration_cast<Clock::duration>(ago);
}

}  // namespace

Job::Job(StoredJob record, RunSpec spec, int threads, std::unique_ptr<ChunkStorage> storage,
         MemoryBudget& budget, std::shared_ptr<JobStore> store, std::int64_t stored_chunks,
         std::set<std::int64_t> missing)
    : record_(std::move(record)),
      spec_(std::move(spec)),
      threads_(threads),
      log_(std::move(storage), budget, stored_chunks, std::move(missing)),
      store_(std::move(store)),
      fetched_at_(from_unix(record_.fetched_at)) {}

Job::~Job() {
  if (expired_) remember("forget an expired job", [&] { store_->remove_job(id()); });
}

template <class Update>
void Job::remember(const char* what, Update update) {
  if (store_ == nullptr) return;
  try {
    update();
  } catch (const std::exception& e) {
    log_event(LogLevel::kError, "job_store_failed",
              {{"job", id()}, {"action", what}, {"error", e.what()}});
  }
}

void Job::release_inputs() {
  Batch& b = spec_.batch;
  // Swapped out, not assigned: `v = {}` keeps the capacity.
  std::vector<double>().swap(b.params);
  std::vector<double>().swap(b.q0);
  std::vector<double>().swap(b.qd0);
  inputs_released_ = true;
}

void Job::restore_inputs(RunSpec fresh) {
  Batch& b = spec_.batch;
  b.params.swap(fresh.batch.params);
  b.q0.swap(fresh.batch.q0);
  b.qd0.swap(fresh.batch.qd0);
  inputs_released_ = false;
}

void Job::publish(ResultLog::Chunk chunk, bool in_memory) {
  log_.append(std::move(chunk), in_memory);
  notify();
}

void Job::publish(std::vector<ResultLog::Chunk> chunks, std::int64_t slice_end) {
  log_.append(std::move(chunks), /*in_memory=*/false, slice_end);
  notify();
}

v1::JobState Job::state() const {
  const std::lock_guard lock(mu_);
  return state_;
}

bool Job::ended() const { return is_final(state()); }

void Job::set_running() {
  const std::lock_guard lock(mu_);
  if (state_ == v1::JOB_STATE_QUEUED) {
    state_ = v1::JOB_STATE_RUNNING;
    started_at_ = Clock::now();
  }
}

Clock::time_point Job::started_at() const {
  const std::lock_guard lock(mu_);
  return started_at_;
}

void Job::end(v1::JobState state, const std::string& message, double elapsed_s,
              std::int64_t steps_total) {
  ResultLog::Chunk chunk;
  v1::JobEnd* e = chunk.mutable_end();
  e->set_state(state);
  e->set_message(message);
  e->set_elapsed_s(elapsed_s);
  e->set_steps_total(steps_total);
  {
    const std::lock_guard lock(mu_);
    end_ = *e;
  }
  try {
    log_.append(std::move(chunk), /*in_memory=*/true);  // kept in memory when the disk is full
  } catch (const std::exception& error) {
    // The job ends all the same: its streams end, a cancel answers, nothing waits on it.
    log_event(LogLevel::kError, "job_end_lost", {{"job", id()}, {"error", error.what()}});
  }
  log_.seal();
  {
    const std::lock_guard lock(mu_);
    state_ = state;
    message_ = message;
    ended_at_ = Clock::now();
  }
  remember("record the end", [&] { store_->set_ended_at(id(), unix_now()); });
  notify();
}

void Job::restore_end(const v1::JobEnd& end) {
  log_.seal();
  const std::lock_guard lock(mu_);
  end_ = end;
  state_ = end.state();
  message_ = end.message();
  // Ended but not recorded so (the process died in between): from now.
  ended_at_ = record_.ended_at > 0 ? from_unix(record_.ended_at) : Clock::now();
}

void Job::republish_end() {
  ResultLog::Chunk chunk;
  {
    const std::lock_guard lock(mu_);
    *chunk.mutable_end() = end_;
  }
  log_.append(std::move(chunk), /*in_memory=*/true);
  notify();
}

void Job::mark_data_lost(const std::string& message) {
  log_.seal();
  {
    const std::lock_guard lock(mu_);
    data_lost_ = true;
    if (!is_final(state_)) {
      state_ = v1::JOB_STATE_FAILED;
      message_ = message;
      ended_at_ = Clock::now();
    }
  }
  notify();
}

bool Job::data_lost() const {
  const std::lock_guard lock(mu_);
  return data_lost_;
}

void Job::set_repair_stop(CancelFlag* flag) {
  const std::lock_guard lock(mu_);
  repair_stop_ = flag;
  if (flag != nullptr && suspend_asked_) flag->request();
}

v1::Progress Job::progress() const {
  const std::lock_guard lock(mu_);
  return progress_;
}

void Job::set_progress(const v1::Progress& p) {
  const std::lock_guard lock(mu_);
  progress_ = p;
}

std::string Job::message() const {
  const std::lock_guard lock(mu_);
  return message_;
}

void Job::request_cancel(v1::JobState reason) {
  bool first = false;
  {
    const std::lock_guard lock(mu_);
    first = !cancel_.requested();
    if (first) cancel_reason_ = reason;
  }
  cancel_.request();
  // A client's cancel outlives a restart; a timeout restarts with the job.
  if (first && reason == v1::JOB_STATE_CANCELLED && !ended())
    remember("record a cancel", [&] { store_->set_cancel_requested(id()); });
}

void Job::request_suspend() {
  {
    const std::lock_guard lock(mu_);
    suspend_asked_ = true;
    if (repair_stop_ != nullptr) repair_stop_->request();
    if (cancel_.requested()) return;
    suspended_ = true;
  }
  cancel_.request();
}

bool Job::suspended() const {
  const std::lock_guard lock(mu_);
  return suspended_;
}

v1::JobState Job::cancel_reason() const {
  const std::lock_guard lock(mu_);
  return cancel_reason_;
}

void Job::mark_fetched() {
  {
    const std::lock_guard lock(mu_);
    if (fetched_at_ != Clock::time_point{}) return;
    fetched_at_ = Clock::now();
  }
  remember("record a fetch", [&] { store_->set_fetched_at(id(), unix_now()); });
}

Clock::time_point Job::ended_at() const {
  const std::lock_guard lock(mu_);
  return ended_at_;
}

Clock::time_point Job::fetched_at() const {
  const std::lock_guard lock(mu_);
  return fetched_at_;
}

std::int64_t Job::subscribe(Listener listener) {
  const std::lock_guard lock(listeners_mu_);
  const std::int64_t token = next_token_++;
  listeners_.emplace(token, std::move(listener));
  return token;
}

void Job::unsubscribe(std::int64_t token) {
  const std::lock_guard lock(listeners_mu_);
  listeners_.erase(token);
}

void Job::notify() {
  std::vector<Listener> listeners;
  {
    const std::lock_guard lock(listeners_mu_);
    for (const auto& [token, listener] : listeners_) listeners.push_back(listener);
  }
  for (const auto& listener : listeners) listener();
}

}  // namespace ukes::server
