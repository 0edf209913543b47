#include "service/server/job_manager.hpp"

#include <stdlib.h>
#include <sys/random.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "kernels/backend/cpu/cpu_backend.hpp"
#include "kernels/backend/gpu/gpu_backend.hpp"
#include "service/protocol/spec_proto.hpp"
#include "service/runspec/spec_text.hpp"
#include "service/server/chunk_storage.hpp"
#include "service/server/job_runner.hpp"
#include "service/server/log.hpp"

namespace ukes::server {

namespace {

using Chunk = v1::StreamJobResultsResponse;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Each variable part of a result header (the spec's text, the sample times, the recorded ids) is
// kept under this, so that the header of any accepted job fits a stock gRPC client's 4 MiB.
constexpr std::int64_t kMaxHeaderPartBytes = std::int64_t{1} << 20;

std::string mib_text(std::int64_t bytes) {
  return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB";
}

// Refuses (LimitError) a spec whose result header would not fit a client.
void check_header_size(const RunSpec& spec, const nlohmann::json& doc, std::size_t spec_bytes) {
  if (static_cast<std::int64_t>(spec_bytes) > kMaxHeaderPartBytes) {
    const auto d = doc.find("description");
    const bool description = d != doc.end() && d->is_string() &&
                             d->get_ref<const std::string&>().size() * 2 > spec_bytes;
    throw LimitError(description ? "description" : "spec",
                     "the spec's text (" + std::to_string(spec_bytes) +
                         " bytes) is returned in the result header: at most " +
                         mib_text(kMaxHeaderPartBytes));
  }
  if (8 * static_cast<std::int64_t>(spec.output.samples) > kMaxHeaderPartBytes)
    throw LimitError("output.samples", std::to_string(spec.output.samples) +
                                           " sample times do not fit the result header: at most " +
                                           std::to_string(kMaxHeaderPartBytes / 8));
  if (5 * static_cast<std::int64_t>(spec.output.trajectory_ids.size()) > kMaxHeaderPartBytes)
    throw LimitError("output.trajectories",
                     std::to_string(spec.output.trajectory_ids.size()) +
                         " recorded systems do not fit the result header: at most " +
                         std::to_string(kMaxHeaderPartBytes / 5));
}

// Refuses (LimitError) a job whose working memory alone exceeds the server's memory budget.
void check_working_memory(const RunSpec& spec, std::int64_t budget) {
  const JobMemory mem = job_memory(spec, job_slice_bytes(spec, budget));
  if (mem.total() <= budget) return;
  const std::string field = mem.trajectory > mem.finals ? "output.samples"
                            : spec.sweep                ? "sweep.count"
                            : spec.explicit_systems     ? "systems"
                                                        : "output.samples";
  throw LimitError(field, "the job needs about " + mib_text(mem.total()) +
                              " of working memory, over the server's memory budget of " +
                              mib_text(budget) + " (--memory-budget-mb)");
}

}  // namespace

JobManager::JobManager(ServerOptions options)
    : options_(std::move(options)),
      models_(options_.model_limits),
      data_dir_(options_.data_dir),
      budget_(options_.memory_budget_bytes) {
  if (!options_.data_dir.empty()) open_store();
  const std::int64_t orphan_chunks = store_ ? store_->removed_orphan_chunks() : 0;
  if (data_dir_.removed_spill_files() > 0 || data_dir_.removed_private_dirs() > 0 ||
      orphan_chunks > 0)
    log_event(LogLevel::kInfo, "orphans_removed",
              {{"spill_files", data_dir_.removed_spill_files()},
               {"private_dirs", data_dir_.removed_private_dirs()},
               {"stored_chunks", orphan_chunks}});
  threads_per_job_ = options_.threads > 0 ? options_.threads : default_cpu_threads();
  gpu_ready_ = options_.device != Device::kCpu && gpu_availability().available;
  if (store_) recover();
  const int workers = std::max(1, options_.max_concurrent_jobs);
  for (int k = 0; k < workers; ++k) workers_.emplace_back([this] { worker_loop(); });
  watchdog_ = std::thread([this] { watchdog_loop(); });
}

JobManager::~JobManager() { shutdown(); }

void JobManager::open_store() {
  const std::string path = data_dir_.path() + "/" + JobStore::kFileName;
  try {
    store_ = std::make_shared<JobStore>(path);
  } catch (const StoreDamagedError& e) {
    if (!options_.set_aside_damaged_store) throw;
    const std::string aside = JobStore::set_aside(path);
    log_event(LogLevel::kWarning, "store_set_aside", {{"file", aside}, {"reason", e.what()}});
    store_ = std::make_shared<JobStore>(path);
  }
}

bool JobManager::gpu_ready() const { return gpu_ready_ && gpu_availability().available; }

// 128 bits from the kernel's random source: an id is a capability (whoever knows it can read and
// cancel the job), so it must not follow from earlier ones, as mt19937_64's outputs did.
std::string JobManager::new_job_id() {
  unsigned char bytes[16];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t r = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<std::size_t>(r);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = "j-";
  for (const unsigned char b : bytes) {
    id += kHex[b >> 4];
    id += kHex[b & 0xf];
  }
  return id;
}

ParseOptions JobManager::parse_options(const std::string& owner) const {
  ParseOptions parse;
  parse.limits = options_.limits;
  // Asked again per job: a GPU that broke under an earlier job is unavailable from then on.
  parse.gpu_available = gpu_ready();
  // Only where the server may use the GPU: --device cpu never loads the module.
  if (parse.gpu_available) parse.gpu_devices = gpu_availability().info.device_count;
  parse.gpu_allowed = options_.devices;
  parse.gpu_unavailable_reason = options_.device == Device::kCpu
                                     ? "this server runs with --device cpu"
                                     : gpu_availability().reason;
  parse.build_batch = false;  // the worker builds the inputs, a slice at a time
  parse.models = &models_;
  parse.model_owner = owner;
  return parse;
}

std::shared_ptr<Job> JobManager::make_job(StoredJob record, RunSpec spec,
                                          std::int64_t stored_chunks,
                                          std::set<std::int64_t> missing) {
  std::unique_ptr<ChunkStorage> storage;
  if (store_)
    storage = std::make_unique<StoredChunks>(store_, record.id);
  else
    storage = std::make_unique<SpillFile>(data_dir_.path() + "/" + record.id + ".chunks");
  const std::string id = record.id;
  auto job =
      std::make_shared<Job>(std::move(record), std::move(spec), threads_per_job_,
                            std::move(storage), budget_, store_, stored_chunks, std::move(missing));
  if (store_) job->on_missing_chunk([this, id] { schedule_repair(id); });
  return job;
}

std::shared_ptr<const ModelInfo> JobManager::register_model(
    const std::string& owner, std::shared_ptr<const ModelInfo> model) {
  if (!store_) return models_.add(owner, std::move(model));
  const std::string id = model_id(*model);
  const std::string definition = model_definition_json(*model).dump();
  return models_.add(owner, std::move(model), [&] {
    check_free_space();
    store_->add_model(owner, id, definition);
  });
}

bool JobManager::delete_model(const std::string& owner, const std::string& id) {
  if (!store_) return models_.remove(owner, id);
  return models_.remove(owner, id, [&] { store_->remove_model(owner, id); });
}

void JobManager::check_free_space() const {
  struct statvfs fs {};
  if (::statvfs(data_dir_.path().c_str(), &fs) != 0) return;  // the write itself will tell
  if (static_cast<std::int64_t>(fs.f_bavail) * static_cast<std::int64_t>(fs.f_frsize) <
      kMinFreeBytes)
    throw DiskFullError();
}

std::shared_ptr<Job> JobManager::submit(const v1::SubmitJobRequest& request,
                                        const std::string& owner) {
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
  RunSpec spec = parse_run_spec(doc, parse_options(owner));
  // The recorded spec holds the model itself, not the id it was named by: results rebuild
  // their systems from the header alone, on any machine.
  if (spec.user_model && doc["model"].is_string())
    doc["model"] = model_definition_json(*spec.model);
  std::string spec_json = doc.dump();
  check_header_size(spec, doc, spec_json.size());
  check_working_memory(spec, budget_.limit());
  const std::string model = spec.model->name;
  const int count = spec.batch.count;

  std::unique_lock lock(mu_);
  if (stopping_) throw QueueFullError("the server is shutting down", false);
  if (static_cast<int>(queue_.size()) >= options_.max_queued_jobs)
    throw QueueFullError("queue: " + std::to_string(queue_.size()) + " jobs are waiting (limit " +
                             std::to_string(options_.max_queued_jobs) + ")",
                         true);
  StoredJob record;
  do record.id = new_job_id();
  while (jobs_.count(record.id) > 0);
  const std::string id = record.id;
  record.owner = owner;
  record.spec_json = std::move(spec_json);
  record.timeout_s = request.timeout_s();
  record.system_summaries = request.has_system_summaries() ? request.system_summaries() : true;
  record.submitted_at = unix_now();
  if (store_) {
    // A job that could not store its results is refused now, with nothing written, rather than
    // accepted to fail (a full disk answers RESOURCE_EXHAUSTED with a retry hint).
    check_free_space();
    store_->add_job(record);
  }
  auto job = make_job(record, std::move(spec));
  // After the record: a crash in between leaves a job without its header, which its run after
  // the restart publishes (run_job).
  publish_header(*job);
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
    cv_.notify_all();  // the job behind it may fit now
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

int JobManager::queued_jobs(const std::string& owner) const {
  const std::lock_guard lock(mu_);
  return static_cast<int>(std::count_if(queue_.begin(), queue_.end(),
                                        [&](const auto& j) { return j->owner() == owner; }));
}

int JobManager::running_jobs(const std::string& owner) const {
  const std::lock_guard lock(mu_);
  return static_cast<int>(std::count_if(in_flight_.begin(), in_flight_.end(),
                                        [&](const Job* j) { return j->owner() == owner; }));
}

bool JobManager::expired(const Job& job, Clock::time_point now) const {
  if (!job.ended()) return false;
  const auto fetched = job.fetched_at();
  return (fetched != Clock::time_point{} &&
          seconds_between(fetched, now) > options_.fetched_ttl_s) ||
         seconds_between(job.ended_at(), now) > options_.result_ttl_s;
}

void JobManager::recover() {
  recover_models();
  std::map<std::string, int> outcomes;
  const auto now = Clock::now();
  for (StoredJob& record : store_->jobs()) ++outcomes[recover_job(std::move(record), now)];
  log_event(LogLevel::kInfo, "jobs_recovered",
            {{"served", outcomes["served"]},
             {"repaired", outcomes["repaired"]},
             {"run_again", outcomes["run_again"]},
             {"ended", outcomes["ended"]},
             {"data_lost", outcomes["data_lost"]},
             {"expired", outcomes["expired"]}});
}

void JobManager::recover_models() {
  for (const StoredModel& m : store_->models()) {
    try {
      if (!m.intact) throw std::runtime_error("its stored record fails its checksum");
      models_.add(m.owner,
                  user_model_from_json(nlohmann::json::parse(m.definition_json), "definition"));
    } catch (const std::exception& e) {
      log_event(LogLevel::kError, "model_not_recovered", {{"model_id", m.id}, {"error", e.what()}});
    }
  }
}

const char* JobManager::recover_job(StoredJob record, Clock::time_point now) {
  const std::string id = record.id;
  if (!record.intact) {
    // Neither its spec nor its owner can be trusted: nothing of it is served.
    log_event(LogLevel::kError, "job_record_corrupt", {{"job", id}});
    auto job = make_job(std::move(record), RunSpec{});
    job->mark_data_lost("DATA_LOSS: the stored record of job " + id + " is corrupt");
    jobs_.emplace(id, std::move(job));
    return "data_lost";
  }
  if (const auto corrupt = store_->remove_corrupt_chunks(id); !corrupt.empty())
    log_event(LogLevel::kError, "chunk_corrupt",
              {{"job", id}, {"chunks", static_cast<std::int64_t>(corrupt.size())}});
  const std::vector<std::int64_t> stored = store_->chunk_sequences(id);
  const std::int64_t last = stored.empty() ? 0 : stored.back();
  std::set<std::int64_t> missing;
  for (std::int64_t k = 1; k <= last; ++k) missing.insert(k);
  for (const std::int64_t k : stored) missing.erase(k);
  const bool cancel_requested = record.cancel_requested;
  std::string error;
  RunSpec spec;
  try {
    spec = parse_run_spec(nlohmann::json::parse(record.spec_json), parse_options(record.owner));
  } catch (const std::exception& e) {
    error = e.what();
  }
  const std::vector<std::string> ends = store_->chunks_of_kind(id, Chunk::kEnd);
  auto job = make_job(std::move(record), std::move(spec), last, std::move(missing));
  const char* outcome = "run_again";
  Chunk end;
  if (!ends.empty() && end.ParseFromString(ends.back())) {
    job->restore_end(end.end());
    if (expired(*job, now)) {
      job->mark_expired();  // its destructor removes it from the store
      return "expired";
    }
    outcome = "served";
  } else if (!error.empty()) {
    job->end(v1::JOB_STATE_FAILED, "cannot run again after the server restarted: " + error, 0.0, 0);
    outcome = "ended";
  } else if (cancel_requested) {
    job->end(v1::JOB_STATE_CANCELLED, "cancelled before the server restarted", 0.0, 0);
    outcome = "ended";
  }
  const bool repair = job->ended() && job->log().missing() > 0;
  if (repair && !error.empty()) {
    job->mark_data_lost("DATA_LOSS: stored results of job " + id +
                        " are corrupt and its spec no longer runs: " + error);
    outcome = "data_lost";
  } else if (repair || !job->ended()) {
    if (repair) outcome = "repaired";
    job->set_stored_slice_ends(store_->slice_ends(id));
    queue_.push_back(job);
  }
  jobs_.emplace(id, std::move(job));
  return outcome;
}

void JobManager::restore_inputs(Job& job) const {
  try {
    job.restore_inputs(
        parse_run_spec(nlohmann::json::parse(job.spec_json()), parse_options(job.owner())));
  } catch (const std::exception& e) {  // it was accepted before: only a changed server refuses it
    log_event(LogLevel::kError, "job_inputs_lost", {{"job", job.id()}, {"error", e.what()}});
  }
}

void JobManager::schedule_repair(const std::string& id) {
  std::shared_ptr<Job> job;
  {
    const std::lock_guard lock(mu_);
    const auto it = jobs_.find(id);
    if (stopping_ || it == jobs_.end()) return;
    job = it->second;
    const bool queued = std::find(queue_.begin(), queue_.end(), job) != queue_.end();
    // A run in flight is followed by another (after_run), which needs the slice ends stored.
    if (queued || in_flight_.count(job.get()) > 0) return;
    job->set_stored_slice_ends(store_->slice_ends(id));
    queue_.push_back(job);
  }
  cv_.notify_all();
  log_event(LogLevel::kError, "chunk_corrupt", {{"job", id}, {"repair", "queued"}});
}

void JobManager::after_run(const std::shared_ptr<Job>& job, std::int64_t missing_found_before) {
  if (!store_ || job->log().missing() == 0) return;
  {
    const std::lock_guard lock(mu_);
    if (stopping_) return;  // the next server finds them (JobStore::remove_corrupt_chunks)
    if (job->log().missing_found() > missing_found_before || !job->ended()) {
      job->set_stored_slice_ends(store_->slice_ends(job->id()));
      queue_.push_back(job);
      return;
    }
  }
  // The run passed every missing chunk without reproducing it: no run will.
  log_event(LogLevel::kError, "job_data_lost",
            {{"job", job->id()}, {"chunks_missing", job->log().missing()}});
  job->mark_data_lost("DATA_LOSS: stored results of job " + job->id() +
                      " are corrupt and could not be computed again");
}

void JobManager::worker_loop() {
  for (;;) {
    std::shared_ptr<Job> job;
    std::int64_t working = 0;
    {
      std::unique_lock lock(mu_);
      // FIFO, and a job starts only when its working memory fits beside the running jobs'.
      cv_.wait(lock, [&] {
        if (stopping_ || queue_.empty()) return stopping_;
        const RunSpec& spec = queue_.front()->spec();
        working = job_memory(spec, job_slice_bytes(spec, budget_.limit())).total();
        return running_ == 0 || working_bytes_ + working <= budget_.limit();
      });
      if (stopping_) return;
      job = queue_.front();
      queue_.pop_front();
      in_flight_.insert(job.get());
      ++running_;
      working_bytes_ += working;
    }
    // Counted in the budget too: while jobs run, fewer result chunks stay in memory.
    budget_.force_reserve(working);
    const std::int64_t missing_found = job->log().missing_found();
    // An ended job comes back only to repair its log; one cancelled while queued does not run.
    if (!job->ended() || job->log().missing() > 0) {
      if (job->inputs_released()) restore_inputs(*job);
      run_job(*job, options_.chunk_target_s, job_slice_bytes(job->spec(), budget_.limit()));
    }
    job->release_inputs();
    budget_.release(working);
    {
      const std::lock_guard lock(mu_);
      in_flight_.erase(job.get());
      --running_;
      working_bytes_ -= working;
    }
    after_run(job, missing_found);
    cv_.notify_all();
  }
}

void JobManager::watchdog_loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, std::chrono::milliseconds(100));
    const auto now = Clock::now();
    // Let go of outside the lock: the last reference to a durable job removes it from the store.
    std::vector<std::shared_ptr<Job>> dropped;
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      Job& job = *it->second;
      // The runner checks the timeout between chunks too; this catches long chunks.
      const auto started = job.started_at();
      if (job.timeout_s() > 0 && started != Clock::time_point{} && !job.ended() &&
          seconds_between(started, now) > job.timeout_s())
        job.request_cancel(v1::JOB_STATE_DEADLINE_EXCEEDED);
      if (expired(job, now)) {
        log_event(LogLevel::kInfo, "job_expired",
                  {{"job", it->first}, {"fetched", job.fetched_at() != Clock::time_point{}}});
        job.mark_expired();
        dropped.push_back(std::move(it->second));
        it = jobs_.erase(it);  // streams still reading keep the job alive until they finish
      } else {
        ++it;
      }
    }
    if (!dropped.empty()) {
      lock.unlock();
      dropped.clear();
      lock.lock();
    }
  }
}

void JobManager::shutdown() {
  std::vector<std::shared_ptr<Job>> queued;
  {
    const std::lock_guard lock(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
    if (!store_) queued.assign(queue_.begin(), queue_.end());
    queue_.clear();
    for (auto& [id, job] : jobs_) {
      if (store_)
        job->request_suspend();
      else
        job->request_cancel(v1::JOB_STATE_CANCELLED);
    }
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
}

}  // namespace ukes::server
