#include "service/server/job.hpp"

#include <vector>

namespace ukes::server {

Job::Job(std::string id, RunSpec spec, std::string spec_json, double timeout_s,
         bool system_summaries, int threads, const std::string& spill_path, MemoryBudget& budget,
         std::string owner)
    : id_(std::move(id)),
      owner_(std::move(owner)),
      spec_(std::move(spec)),
      spec_json_(std::move(spec_json)),
      timeout_s_(timeout_s),
      system_summaries_(system_summaries),
      threads_(threads),
      log_(spill_path, budget) {}

void Job::release_inputs() {
  Batch& b = spec_.batch;
  // Swapped out, not assigned: `v = {}` keeps the capacity.
  std::vector<double>().swap(b.params);
  std::vector<double>().swap(b.q0);
  std::vector<double>().swap(b.qd0);
}

void Job::publish(ResultLog::Chunk chunk, bool in_memory) {
  log_.append(std::move(chunk), in_memory);
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
  log_.append(std::move(chunk), /*in_memory=*/true);
  {
    const std::lock_guard lock(mu_);
    state_ = state;
    message_ = message;
    ended_at_ = Clock::now();
  }
  notify();
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
  {
    const std::lock_guard lock(mu_);
    if (!cancel_.requested()) cancel_reason_ = reason;
  }
  cancel_.request();
}

v1::JobState Job::cancel_reason() const {
  const std::lock_guard lock(mu_);
  return cancel_reason_;
}

void Job::mark_fetched() {
  const std::lock_guard lock(mu_);
  if (fetched_at_ == Clock::time_point{}) fetched_at_ = Clock::now();
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
