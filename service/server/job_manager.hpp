// The server's jobs: validation on submit, a FIFO queue served by a fixed number of worker
// threads (max_concurrent_jobs jobs share the machine), cancellation, and a watchdog that stops
// jobs running past their timeout and drops finished jobs whose results were fetched or have
// waited too long.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "service/runspec/model_source.hpp"
#include "service/server/data_dir.hpp"
#include "service/server/job.hpp"
#include "service/server/server_options.hpp"
#include "ukes/v1/ukes.pb.h"

namespace ukes::server {

// The queue is full, or the server is shutting down (RESOURCE_EXHAUSTED). `retry`: a client may
// try again shortly (a full queue drains; a server going down does not come back).
class QueueFullError : public std::runtime_error {
 public:
  QueueFullError(const std::string& message, bool retry)
      : std::runtime_error(message), retry_(retry) {}
  bool retry() const { return retry_; }

 private:
  bool retry_;
};

class JobManager {
 public:
  explicit JobManager(ServerOptions options);
  ~JobManager();  // shutdown()
  JobManager(const JobManager&) = delete;
  JobManager& operator=(const JobManager&) = delete;

  // Validates the request completely and queues the job (its header already published). Throws
  // SpecError (INVALID_ARGUMENT), LimitError or QueueFullError (RESOURCE_EXHAUSTED).
  std::shared_ptr<Job> submit(const v1::SubmitJobRequest& request, const std::string& owner = {});
  // nullptr when unknown or expired.
  std::shared_ptr<Job> find(const std::string& id) const;
  // Cancels a queued job at once, or asks a running one to stop; returns the job's state after.
  v1::JobState cancel(Job& job);
  // 1-based place in the queue; 0 when not queued.
  int queue_position(const Job& job) const;

  int queued_jobs() const;
  int running_jobs() const;
  const ServerOptions& options() const { return options_; }
  const std::string& data_dir() const { return data_dir_.path(); }
  int threads_per_job() const { return threads_per_job_; }
  // Whether jobs may run on the GPU now: a usable one exists (none from the moment it broke,
  // gpu_backend.hpp) and --device is not cpu.
  bool gpu_ready() const;
  // User models registered with this server (RegisterModel), which specs may name by id.
  ModelRegistry& models() { return models_; }

  // Cancels everything, stops the workers, removes spill files (and the data directory when it
  // was created here).
  void shutdown();

 private:
  void worker_loop();
  void watchdog_loop();
  std::string new_job_id();

  const ServerOptions options_;
  ModelRegistry models_;
  DataDir data_dir_;
  int threads_per_job_ = 1;
  bool gpu_ready_ = false;
  MemoryBudget budget_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::map<std::string, std::shared_ptr<Job>> jobs_;
  std::deque<std::shared_ptr<Job>> queue_;
  int running_ = 0;
  std::int64_t working_bytes_ = 0;  // job_memory of the running jobs
  std::vector<std::thread> workers_;
  std::thread watchdog_;
};

}  // namespace ukes::server
