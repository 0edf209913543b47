// The server's jobs: validation on submit, a FIFO queue served by a fixed number of worker
// threads (max_concurrent_jobs jobs share the machine), cancellation, and a watchdog that stops
// jobs running past their timeout and drops finished jobs whose results were fetched or have
// waited too long. With a data directory (ServerOptions::data_dir) jobs are durable: kept in the
// job store (service/server/job_store.hpp), found there again by the next server, which serves
// the finished ones and runs the others again; without one they live in memory only.
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
  const ModelRegistry& models() const { return models_; }
  // Registers a model (ModelRegistry::add), in the job store too when jobs are durable.
  std::shared_ptr<const ModelInfo> register_model(std::shared_ptr<const ModelInfo> model);

  // Stops the workers. Memory-only jobs end cancelled (and their spill files go); durable ones
  // stop without ending, for the next server to run again.
  void shutdown();

 private:
  ParseOptions parse_options() const;
  std::shared_ptr<Job> make_job(StoredJob record, RunSpec spec, std::int64_t stored_chunks);
  // Reopens the job store's jobs and models (at construction).
  void recover();
  bool expired(const Job& job, Clock::time_point now) const;
  void worker_loop();
  void watchdog_loop();
  std::string new_job_id();

  const ServerOptions options_;
  ModelRegistry models_;
  DataDir data_dir_;
  std::shared_ptr<JobStore> store_;  // null: memory-only jobs
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
