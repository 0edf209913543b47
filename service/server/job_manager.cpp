#include "service/server/job_manager.hpp"

#include <stdlib.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>

#include "kernels/backend/cpu/cpu_backend.hpp"
#include "kernels/backend/gpu/gpu_backend.hpp"
#include "service/protocol/spec_proto.hpp"
#include "service/runspec/spec_text.hpp"
#include "service/server/job_runner.hpp"
#include "service/server/log.hpp"

namespace ukes::server {

namespace {

std::string make_private_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/ukes-server-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("cannot create a data directory under " + pattern);
  return pattern;
}

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

JobManager::JobManager(ServerOptions options)
    : options_(std::move(options)), budget_(options_.memory_budget_bytes) {
  if (options_.data_dir.empty()) {
    data_dir_ = make_private_dir();
    own_data_dir_ = true;
  } else {
    data_dir_ = options_.data_dir;
    std::filesystem::create_directories(data_dir_);
  }
  threads_per_job_ = options_.threads > 0 ? options_.threads : default_cpu_threads();
  gpu_ready_ = options_.device != Device::kCpu && gpu_availability().available;
  const int workers = std::max(1, options_.max_concurrent_jobs);
  for (int k = 0; k < workers; ++k) workers_.emplace_back([this] { worker_loop(); });
  watchdog_ = std::thread([this] { watchdog_loop(); });
}

JobManager::~JobManager() { shutdown(); }

std::string JobManager::new_job_id() {
  static std::mt19937_64 rng{std::random_device{}()};
  char buf[24];
  std::snprintf(buf, sizeof buf, "j-%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

std::shared_ptr<Job> JobManager::submit(const v1::SubmitJobRequest& request) {
  nlohmann::json doc;
  switch (request.spec_case()) {
    case v1::SubmitJobRequest::kRunSpec:
      doc = spec_json_from_proto(request.run_spec());
      break;
    case v1::SubmitJobRequest::kSpecJson:
      doc = parse_spec_text(request.spec_json());
      break;
    case v1::SubmitJobRequest::SPEC_NOT_SET:
      throw SpecError("spec", "give run_spec or spec_json");
  }
  if (!std::isfinite(request.timeout_s()) || request.timeout_s() < 0)
    throw SpecError("timeout_s", "must be a finite number of seconds >= 0 (0: no limit)");
  ParseOptions parse;
  parse.limits = options_.limits;
  parse.gpu_available = gpu_ready_;
  parse.gpu_unavailable_reason = options_.device == Device::kCpu
                                     ? "this server runs with --device cpu"
                                     : gpu_availability().reason;
  RunSpec spec = parse_run_spec(doc, parse);
  const std::string model = spec.model->name;
  const int count = spec.batch.count;

  std::unique_lock lock(mu_);
  if (stopping_) throw QueueFullError("the server is shutting down");
  if (static_cast<int>(queue_.size()) >= options_.max_queued_jobs)
    throw QueueFullError("queue: " + std::to_string(queue_.size()) + " jobs are waiting (limit " +
                         std::to_string(options_.max_queued_jobs) + ")");
  std::string id;
  do id = new_job_id();
  while (jobs_.count(id) > 0);
  auto job =
      std::make_shared<Job>(id, std::move(spec), doc.dump(), request.timeout_s(),
                            request.has_system_summaries() ? request.system_summaries() : true,
                            threads_per_job_, data_dir_ + "/" + id + ".chunks", budget_);
  publish_header(*job, device_name(job->spec().device_resolved));
  jobs_.emplace(id, job);
  queue_.push_back(job);
  const auto position = queue_.size();
  lock.unlock();
  cv_.notify_all();
  log_event(LogLevel::kInfo, "job_submitted",
            {{"job", id}, {"model", model}, {"systems", count}, {"queue_position", position}});
  return job;
}

std::shared_ptr<Job> JobManager::find(const std::string& id) const {
  const std::lock_guard lock(mu_);
  const auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second;
}

v1::JobState JobManager::cancel(Job& job) {
  bool was_queued = false;
  {
    const std::lock_guard lock(mu_);
    const auto it =
        std::find_if(queue_.begin(), queue_.end(), [&](const auto& j) { return j.get() == &job; });
    if (it != queue_.end()) {
      queue_.erase(it);
      was_queued = true;
    }
  }
  job.request_cancel(v1::JOB_STATE_CANCELLED);
  if (was_queued) {
    job.end(v1::JOB_STATE_CANCELLED, "cancelled before it started", 0.0, 0);
    job.release_inputs();  // no worker will see it
  }
  log_event(LogLevel::kInfo, "job_cancel_requested",
            {{"job", job.id()}, {"was_queued", was_queued}});
  return job.state();
}

int JobManager::queue_position(const Job& job) const {
  const std::lock_guard lock(mu_);
  for (std::size_t k = 0; k < queue_.size(); ++k)
    if (queue_[k].get() == &job) return static_cast<int>(k) + 1;
  return 0;
}

int JobManager::queued_jobs() const {
  const std::lock_guard lock(mu_);
  return static_cast<int>(queue_.size());
}

int JobManager::running_jobs() const {
  const std::lock_guard lock(mu_);
  return running_;
}

void JobManager::worker_loop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = queue_.front();
      queue_.pop_front();
      ++running_;
    }
    if (!job->ended()) run_job(*job, options_.chunk_target_s);
    job->release_inputs();
    const std::lock_guard lock(mu_);
    --running_;
  }
}

void JobManager::watchdog_loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, std::chrono::milliseconds(100));
    const auto now = Clock::now();
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      Job& job = *it->second;
      // The runner checks the timeout between chunks too; this catches long chunks.
      const auto started = job.started_at();
      if (job.timeout_s() > 0 && started != Clock::time_point{} && !job.ended() &&
          seconds_between(started, now) > job.timeout_s())
        job.request_cancel(v1::JOB_STATE_DEADLINE_EXCEEDED);
      const bool ended = job.ended();
      const auto fetched = job.fetched_at();
      const bool expired = ended && ((fetched != Clock::time_point{} &&
                                      seconds_between(fetched, now) > options_.fetched_ttl_s) ||
                                     seconds_between(job.ended_at(), now) > options_.result_ttl_s);
      if (expired) {
        log_event(LogLevel::kInfo, "job_expired",
                  {{"job", it->first}, {"fetched", fetched != Clock::time_point{}}});
        it = jobs_.erase(it);  // streams still reading keep the job alive until they finish
      } else {
        ++it;
      }
    }
  }
}

void JobManager::shutdown() {
  std::vector<std::shared_ptr<Job>> queued;
  {
    const std::lock_guard lock(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
    queued.assign(queue_.begin(), queue_.end());
    queue_.clear();
    for (auto& [id, job] : jobs_) job->request_cancel(v1::JOB_STATE_CANCELLED);
  }
  cv_.notify_all();
  for (auto& job : queued) job->end(v1::JOB_STATE_CANCELLED, "the server shut down", 0.0, 0);
  for (auto& w : workers_) w.join();
  workers_.clear();
  if (watchdog_.joinable()) watchdog_.join();
  {
    const std::lock_guard lock(mu_);
    jobs_.clear();
  }
  if (own_data_dir_) {
    std::error_code ec;
    std::filesystem::remove_all(data_dir_, ec);
  }
}

}  // namespace ukes::server
