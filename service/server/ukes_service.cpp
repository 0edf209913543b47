#include "service/server/ukes_service.hpp"

#include <memory>
#include <mutex>
#include <optional>

#include "kernels/backend/gpu/gpu_backend.hpp"
#include "kernels/models/model_info.hpp"
#include "service/engine/version.hpp"
#include "service/protocol/metadata.hpp"
#include "service/protocol/model_proto.hpp"
#include "service/runspec/printable_text.hpp"
#include "service/server/log.hpp"

namespace ukes::server {

namespace {

grpc::ServerUnaryReactor* finish(grpc::CallbackServerContext* context, const grpc::Status& s) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(s);
  return reactor;
}

// A stream that only reports an error.
class ErrorStream final : public grpc::ServerWriteReactor<v1::StreamJobResultsResponse> {
 public:
  explicit ErrorStream(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

// Streams a job's result log from chunk `next` on, following the job until it ends.
//
// gRPC may run OnWriteDone and OnDone inline, inside StartWrite and Finish, so pump() calls those
// with no lock held, re-entrant calls only flag more work for the running pump (no recursion), and
// the object lives in a shared_ptr that every pump holds: OnDone drops the stream's own reference,
// and the last pump to finish frees it.
class ResultStream final : public grpc::ServerWriteReactor<v1::StreamJobResultsResponse>,
                           public std::enable_shared_from_this<ResultStream> {
 public:
  static ResultStream* start(std::shared_ptr<Job> job, std::int64_t resume_after,
                             std::string peer) {
    std::shared_ptr<ResultStream> stream(
        new ResultStream(std::move(job), resume_after, std::move(peer)));
    stream->self_ = stream;
    std::weak_ptr<ResultStream> weak = stream;
    stream->token_ = stream->job_->subscribe([weak] {
      if (auto s = weak.lock()) s->pump();
    });
    stream->pump();
    return stream.get();
  }

  void OnWriteDone(bool ok) override {
    {
      const std::lock_guard lock(mu_);
      in_flight_ = false;
      current_.reset();
      if (ok)
        ++next_;
      else
        broken_ = true;  // the client went away
    }
    pump();
  }

  void OnCancel() override {
    {
      const std::lock_guard lock(mu_);
      broken_ = true;
    }
    pump();
  }

  void OnDone() override {
    job_->unsubscribe(token_);
    self_.reset();
  }

 private:
  ResultStream(std::shared_ptr<Job> job, std::int64_t resume_after, std::string peer)
      : job_(std::move(job)), peer_(std::move(peer)), first_(resume_after + 1), next_(first_) {}

  void pump() {
    const auto keep = shared_from_this();
    std::unique_lock lock(mu_);
    if (pumping_) {
      repump_ = true;
      return;
    }
    pumping_ = true;
    for (;;) {
      repump_ = false;
      const v1::StreamJobResultsResponse* write = nullptr;
      std::optional<grpc::Status> finish;
      if (!finished_) {
        if (broken_) {
          finish = grpc::Status::CANCELLED;
        } else if (!in_flight_) {
          try {
            current_ = job_->log().get(next_);
            if (current_) {
              in_flight_ = true;
              write = current_.get();
            } else if (job_->ended() && next_ > job_->log().size()) {
              // JobEnd is appended before the state turns final: nothing is left to send.
              job_->mark_fetched();
              finish = grpc::Status::OK;
            }
          } catch (const std::exception& e) {
            finish = grpc::Status(grpc::StatusCode::INTERNAL, e.what());
          }
        }
      }
      if (finish) {
        finished_ = true;
        log_event(finish->ok() ? LogLevel::kInfo : LogLevel::kWarning, "stream_finished",
                  {{"job", job_->id()},
                   {"peer", peer_},
                   {"first_chunk", first_},
                   {"chunks_sent", next_ - first_},
                   {"status", finish->ok() ? "OK" : finish->error_message()}});
      }
      if (write != nullptr || finish) {
        lock.unlock();
        if (write != nullptr)
          StartWrite(write);
        else
          Finish(*finish);
        lock.lock();
        continue;
      }
      if (!repump_) break;
    }
    pumping_ = false;
  }

  const std::shared_ptr<Job> job_;
  const std::string peer_;
  const std::int64_t first_;
  std::shared_ptr<ResultStream> self_;  // released by OnDone
  std::int64_t token_ = 0;
  std::mutex mu_;
  std::int64_t next_ = 1;
  bool in_flight_ = false, broken_ = false, finished_ = false;
  bool pumping_ = false, repump_ = false;
  std::shared_ptr<const v1::StreamJobResultsResponse> current_;  // alive while being written
};

}  // namespace

grpc::Status UkesService::find(const std::string& job_id, std::shared_ptr<Job>* job) const {
  if (job_id.empty()) return {grpc::StatusCode::INVALID_ARGUMENT, "job_id: must not be empty"};
  *job = jobs_.find(job_id);
  if (!*job)
    return {grpc::StatusCode::NOT_FOUND, "job_id: no job '" +
                                             printable_text(job_id, kMaxQuotedFieldBytes) +
                                             "' (unknown or expired)"};
  return grpc::Status::OK;
}

grpc::Status UkesService::submit(grpc::CallbackServerContext* context,
                                 const v1::SubmitJobRequest& request, std::shared_ptr<Job>* job) {
  try {
    *job = jobs_.submit(request);
    return grpc::Status::OK;
  } catch (const LimitError& e) {
    // SpecError keeps its field printable and bounded: gRPC aborts on any other metadata value.
    context->AddTrailingMetadata(kFieldMetadataKey, e.field());
    log_event(LogLevel::kWarning, "job_rejected",
              {{"peer", context->peer()}, {"code", "RESOURCE_EXHAUSTED"}, {"error", e.what()}});
    return {grpc::StatusCode::RESOURCE_EXHAUSTED, e.what()};
  } catch (const SpecError& e) {
    context->AddTrailingMetadata(kFieldMetadataKey, e.field());
    log_event(LogLevel::kWarning, "job_rejected",
              {{"peer", context->peer()}, {"code", "INVALID_ARGUMENT"}, {"error", e.what()}});
    return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
  } catch (const QueueFullError& e) {
    // Clients wait out a full queue (client/remote.cpp); limits and bad specs they do not.
    if (e.retry()) context->AddTrailingMetadata(kRetryAfterMetadataKey, "1");
    log_event(LogLevel::kWarning, "job_rejected",
              {{"peer", context->peer()}, {"code", "RESOURCE_EXHAUSTED"}, {"error", e.what()}});
    return {grpc::StatusCode::RESOURCE_EXHAUSTED, e.what()};
  } catch (const std::bad_alloc&) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED, "not enough memory for this job"};
  } catch (const std::exception& e) {
    const std::string error = printable_text(e.what(), kMaxQuotedReasonBytes);
    log_event(LogLevel::kError, "submit_failed", {{"error", error}});
    return {grpc::StatusCode::INTERNAL, error};
  }
}

grpc::ServerUnaryReactor* UkesService::ListModels(grpc::CallbackServerContext* context,
                                                  const v1::ListModelsRequest*,
                                                  v1::ListModelsResponse* response) {
  for (const auto& m : catalogue_info()) model_to_proto(m, response->add_models());
  return finish(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* UkesService::DescribeModel(grpc::CallbackServerContext* context,
                                                     const v1::DescribeModelRequest* request,
                                                     v1::DescribeModelResponse* response) {
  if (request->name().empty())
    return finish(context, {grpc::StatusCode::INVALID_ARGUMENT, "name: must not be empty"});
  const ModelInfo* m = find_model(request->name());
  if (m == nullptr)
    return finish(context, {grpc::StatusCode::NOT_FOUND,
                            "name: unknown model '" +
                                printable_text(request->name(), kMaxQuotedFieldBytes) + "'"});
  model_to_proto(*m, response->mutable_model());
  return finish(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* UkesService::GetServerInfo(grpc::CallbackServerContext* context,
                                                     const v1::GetServerInfoRequest*,
                                                     v1::GetServerInfoResponse* response) {
  const ServerOptions& o = jobs_.options();
  response->set_version(version());
  response->add_backends("cpu");
  const GpuAvailability& gpu = gpu_availability();
  if (jobs_.gpu_ready()) {
    response->add_backends("gpu");
    v1::GpuInfo* g = response->mutable_gpu();
    g->set_name(gpu.info.name);
    g->set_compute_capability(std::to_string(gpu.info.compute_major) + "." +
                              std::to_string(gpu.info.compute_minor));
    g->set_multiprocessors(gpu.info.multiprocessors);
    g->set_memory_bytes(static_cast<std::int64_t>(gpu.info.total_memory));
    g->set_driver_version(cuda_version_text(gpu.info.driver_version));
    g->set_runtime_version(cuda_version_text(gpu.info.runtime_version));
  } else {
    response->set_gpu_unavailable_reason(
        o.device == Device::kCpu ? "this server runs with --device cpu" : gpu.reason);
  }
  response->set_default_backend(jobs_.gpu_ready() ? "gpu" : "cpu");
  response->set_cpu_threads(jobs_.threads_per_job());
  response->set_max_concurrent_jobs(o.max_concurrent_jobs);
  response->set_max_queued_jobs(o.max_queued_jobs);
  response->set_max_systems(o.limits.max_systems);
  response->set_max_samples(o.limits.max_samples);
  response->set_max_trajectory_bytes(o.limits.max_trajectory_bytes);
  response->set_queued_jobs(jobs_.queued_jobs());
  response->set_running_jobs(jobs_.running_jobs());
  return finish(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* UkesService::SubmitJob(grpc::CallbackServerContext* context,
                                                 const v1::SubmitJobRequest* request,
                                                 v1::SubmitJobResponse* response) {
  std::shared_ptr<Job> job;
  const grpc::Status s = submit(context, *request, &job);
  if (s.ok()) {
    response->set_job_id(job->id());
    response->set_queue_position(jobs_.queue_position(*job));
  }
  return finish(context, s);
}

grpc::ServerWriteReactor<v1::StreamJobResultsResponse>* UkesService::StreamJobResults(
    grpc::CallbackServerContext* context, const v1::StreamJobResultsRequest* request) {
  std::shared_ptr<Job> job;
  const grpc::Status s = find(request->job_id(), &job);
  if (!s.ok()) return new ErrorStream(s);
  if (request->resume_after() < 0)
    return new ErrorStream({grpc::StatusCode::INVALID_ARGUMENT, "resume_after: must be >= 0"});
  // The log of an ended job is complete: resuming past its end is a client error.
  if (job->ended() && request->resume_after() > job->log().size())
    return new ErrorStream(
        {grpc::StatusCode::OUT_OF_RANGE,
         "resume_after: the job has only " + std::to_string(job->log().size()) + " chunks"});
  return ResultStream::start(std::move(job), request->resume_after(), context->peer());
}

grpc::ServerWriteReactor<v1::StreamJobResultsResponse>* UkesService::Simulate(
    grpc::CallbackServerContext* context, const v1::SimulateRequest* request) {
  std::shared_ptr<Job> job;
  const grpc::Status s = submit(context, request->job(), &job);
  if (!s.ok()) return new ErrorStream(s);
  return ResultStream::start(std::move(job), 0, context->peer());
}

grpc::ServerUnaryReactor* UkesService::GetJob(grpc::CallbackServerContext* context,
                                              const v1::GetJobRequest* request,
                                              v1::GetJobResponse* response) {
  std::shared_ptr<Job> job;
  const grpc::Status s = find(request->job_id(), &job);
  if (!s.ok()) return finish(context, s);
  response->set_job_id(job->id());
  response->set_state(job->state());
  response->set_model(job->spec().model->name);
  v1::Progress progress = job->progress();
  progress.set_systems_total(job->spec().batch.count);
  *response->mutable_progress() = progress;
  response->set_chunks(job->log().size());
  response->set_queue_position(jobs_.queue_position(*job));
  response->set_message(job->message());
  return finish(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* UkesService::CancelJob(grpc::CallbackServerContext* context,
                                                 const v1::CancelJobRequest* request,
                                                 v1::CancelJobResponse* response) {
  std::shared_ptr<Job> job;
  const grpc::Status s = find(request->job_id(), &job);
  if (!s.ok()) return finish(context, s);
  response->set_state(jobs_.cancel(*job));
  return finish(context, grpc::Status::OK);
}

}  // namespace ukes::server
