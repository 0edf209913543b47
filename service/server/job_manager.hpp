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
#include <set>
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
  // A durable job is refused (DiskFullError) while the data directory has less than this free.
  static constexpr std::int64_t kMinFreeBytes = std::int64_t{1} << 20;

  explicit JobManager(ServerOptions options);
  ~JobManager();  // shutdown()
  JobManager(const JobManager&) = delete;
  JobManager& operator=(const JobManager&) = delete;

  // Validates the request completely and queues the job (its header already published). Throws
  // SpecError (INVALID_ARGUMENT), LimitError, QueueFullError or DiskFullError
  // (RESOURCE_EXHAUSTED); nothing is kept of a job that is refused.
  std::shared_ptr<Job> submit(const v1::SubmitJobRequest& request, const std::string& owner = {});
  // nullptr when unknown or expired.
  std::shared_ptr<Job> find(const std::string& id) const;
  // Cancels a queued job at once, or asks a running one to stop; returns the job's state after.
  v1::JobState cancel(Job& job);
  // 1-based place in the queue; 0 when not queued.
  int queue_position(const Job& job) const;

  int queued_jobs() const;
  int running_jobs() const;
  // The same, of `owner`'s jobs alone.
  int queued_jobs(const std::string& owner) const;
  int running_jobs(const std::string& owner) const;
  const ServerOptions& options() const { return options_; }
  const std::string& data_dir() const { return data_dir_.path(); }
  int threads_per_job() const { return threads_per_job_; }
  // Whether jobs may run on the GPU now: a usable one exists (none from the moment it broke,
  // gpu_backend.hpp) and --device is not cpu.
  bool gpu_ready() const;
  // User models registered with this server (RegisterModel), which specs may name by id.
  const ModelRegistry& models() const { return models_; }
  // Registers `owner`'s model (ModelRegistry::add), in the job store first when jobs are
  // durable: LimitError, or DiskFullError, and nothing registered, when it cannot.
  std::shared_ptr<const ModelInfo> register_model(const std::string& owner,
                                                  std::shared_ptr<const ModelInfo> model);
  // Removes `owner`'s model `id`; false when the owner has none.
  bool delete_model(const std::string& owner, const std::string& id);

  // Stops the workers. Memory-only jobs end cancelled (and their spill files go); durable ones
  // stop without ending, for the next server to run again.
  void shutdown();

 private:
  // The job store under the data directory, set aside first if damaged and the options say so.
  void open_store();
  ParseOptions parse_options(const std::string& owner) const;
  std::shared_ptr<Job> make_job(StoredJob record, RunSpec spec, std::int64_t stored_chunks = 0,
                                std::set<std::int64_t> missing = {});
  // DiskFullError when the data directory's file system has less than kMinFreeBytes left.
  void check_free_space() const;
  // Reopens the job store's models and jobs (at construction).
  void recover();
  void recover_models();
  // What a stored job becomes: served, run again, ended, or dropped ("expired").
  const char* recover_job(StoredJob record, Clock::time_point now);
  // Gives a job whose inputs were released (Job::release_inputs) its inputs again, for a run
  // that repairs its log.
  void restore_inputs(Job& job) const;
  // Queues a durable job to run again and fill the missing chunks of its log (at most once at a
  // time; a job already queued or running fills them in its run, or is queued again after it).
  void schedule_repair(const std::string& id);
  // After a run: queues the job again when chunks went missing while it ran, or marks what a
  // run could not reproduce as lost.
  void after_run(const std::shared_ptr<Job>& job, std::int64_t missing_found_before);
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
  std::set<const Job*> in_flight_;  // taken off the queue by a worker, not yet given back
  int running_ = 0;
  std::int64_t working_bytes_ = 0;  // job_memory of the running jobs
  std::vector<std::thread> workers_;
  std::thread watchdog_;
};

}  // namespace ukes::server
