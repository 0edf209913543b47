#include "service/server/ukes_service.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>

#include "kernels/backend/gpu/gpu_backend.hpp"
#include "kernels/models/model_info.hpp"
#include "service/engine/version.hpp"
#include "service/protocol/metadata.hpp"
#include "service/protocol/model_proto.hpp"
#include "service/runspec/model_source.hpp"
#include "service/runspec/printable_text.hpp"
#include "service/runspec/run_spec.hpp"
#include "service/runspec/spec_text.hpp"
#include "service/server/log.hpp"

namespace ukes::server {

namespace {

// Seconds a client waits before trying again after a full disk: room comes back when an operator
// or the expiry of old jobs makes it, not within the second a full queue takes.
constexpr const char* kDiskFullRetryAfterS = "5";

grpc::ServerUnaryReactor* finish(grpc::CallbackServerContext* context, const grpc::Status& s) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(s);
  return reactor;
}

// The request in `bytes`, or INVALID_ARGUMENT when they are no valid Message.
template <class Message>
grpc::Status parse_request(const grpc::ByteBuffer& bytes, Message& message) {
  grpc::ByteBuffer copy(bytes);  // Deserialize consumes its buffer; copies share the slices
  if (grpc::SerializationTraits<Message>::Deserialize(&copy, &message).ok())
    return grpc::Status::OK;
  return {grpc::StatusCode::INVALID_ARGUMENT,
          "request: not a valid " + Message::descriptor()->full_name() +
              " (malformed protobuf, or a string field that is not UTF-8)"};
}

// Serializes `message` into `bytes` (a gRPC error status should it fail).
template <class Message>
grpc::Status serialize(const Message& message, grpc::ByteBuffer* bytes) {
  bool own_buffer = false;
  return grpc::SerializationTraits<Message>::Serialize(message, bytes, &own_buffer);
}

// What the exception being handled answers: a full disk RESOURCE_EXHAUSTED with a retry hint,
// anything else INTERNAL with its (bounded) text; never what gRPC answers for an exception that
// escapes a handler, UNIMPLEMENTED with no message.
grpc::Status exception_status(grpc::CallbackServerContext* context) {
  try {
    throw;
  } catch (const DiskFullError& e) {
    context->AddTrailingMetadata(kRetryAfterMetadataKey, kDiskFullRetryAfterS);
    log_event(LogLevel::kWarning, "disk_full", {{"peer", context->peer()}});
    return {grpc::StatusCode::RESOURCE_EXHAUSTED, e.what()};
  } catch (const std::bad_alloc&) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED, "not enough memory for this request"};
  } catch (const std::exception& e) {
    const std::string error = printable_text(e.what(), kMaxQuotedReasonBytes);
    log_event(LogLevel::kError, "request_failed", {{"peer", context->peer()}, {"error", error}});
    return {grpc::StatusCode::INTERNAL, error};
  }
}

// A unary call: parses the request, runs `handle(request, response)`, serializes its response.
template <class Request, class Response, class Handler>
grpc::ServerUnaryReactor* unary(grpc::CallbackServerContext* context, const grpc::ByteBuffer& in,
                                grpc::ByteBuffer* out, Handler&& handle) {
  Request request;
  grpc::Status status = parse_request(in, request);
  if (status.ok()) {
    Response response;
    try {
      status = handle(request, response);
    } catch (...) {
      status = exception_status(context);
    }
    if (status.ok()) status = serialize(response, out);
  }
  return finish(context, status);
}

// A stream that only reports an error.
class ErrorStream final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
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
class ResultStream final : public grpc::ServerWriteReactor<grpc::ByteBuffer>,
                           public std::enable_shared_from_this<ResultStream> {
 public:
  static ResultStream* start(std::shared_ptr<Job> job, std::int64_t resume_after, std::string peer,
                             std::unique_ptr<StreamLimit::Slot> slot) {
    std::shared_ptr<ResultStream> stream(
        new ResultStream(std::move(job), resume_after, std::move(peer), std::move(slot)));
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
      current_.Clear();
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
  ResultStream(std::shared_ptr<Job> job, std::int64_t resume_after, std::string peer,
               std::unique_ptr<StreamLimit::Slot> slot)
      : job_(std::move(job)),
        peer_(std::move(peer)),
        slot_(std::move(slot)),
        first_(resume_after + 1),
        next_(first_) {}

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
      const grpc::ByteBuffer* write = nullptr;
      std::optional<grpc::Status> finish;
      if (!finished_) {
        if (broken_) {
          finish = grpc::Status::CANCELLED;
        } else if (!in_flight_) {
          try {
            const auto chunk = job_->log().get(next_);
            if (!chunk && job_->data_lost() &&
                (next_ > job_->log().size() || job_->log().is_missing(next_))) {
              finish = grpc::Status(grpc::StatusCode::DATA_LOSS, job_->message());
            } else if (chunk) {
              const grpc::Status s = serialize(*chunk, &current_);
              if (!s.ok()) throw std::runtime_error(s.error_message());
              in_flight_ = true;
              write = &current_;
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
  const std::unique_ptr<StreamLimit::Slot> slot_;  // given back when the stream is freed
  const std::int64_t first_;
  std::shared_ptr<ResultStream> self_;  // released by OnDone
  std::int64_t token_ = 0;
  std::mutex mu_;
  std::int64_t next_ = 1;
  bool in_flight_ = false, broken_ = false, finished_ = false;
  bool pumping_ = false, repump_ = false;
  grpc::ByteBuffer current_;  // the chunk being written
};

}  // namespace

std::unique_ptr<StreamLimit::Slot> StreamLimit::try_acquire() {
  if (open_.fetch_add(1) >= limit_) {
    open_.fetch_sub(1);
    return nullptr;
  }
  return std::make_unique<Slot>(*this);
}

std::unique_ptr<StreamLimit::Slot> UkesService::stream_slot(grpc::CallbackServerContext* context,
                                                            grpc::Status* error) {
  auto slot = streams_.try_acquire();
  if (!slot) {
    // Clients wait a full stream table out as they wait out a full queue.
    context->AddTrailingMetadata(kRetryAfterMetadataKey, "1");
    *error = {grpc::StatusCode::RESOURCE_EXHAUSTED,
              "streams: " + std::to_string(streams_.limit()) +
                  " result streams are open, the server's limit (--max-streams)"};
  }
  return slot;
}

grpc::Status UkesService::authenticate(grpc::CallbackServerContext* context,
                                       std::string* principal) const {
  std::optional<std::string> who = auth_.principal(*context);
  if (!who) {
    log_event(LogLevel::kWarning, "unauthenticated", {{"peer", context->peer()}});
    return {grpc::StatusCode::UNAUTHENTICATED,
            "a bearer token (authorization metadata) or a client certificate this server accepts "
            "is required"};
  }
  *principal = std::move(*who);
  return grpc::Status::OK;
}

grpc::Status UkesService::find(const std::string& job_id, const std::string& principal,
                               std::shared_ptr<Job>* job) const {
  if (job_id.empty()) return {grpc::StatusCode::INVALID_ARGUMENT, "job_id: must not be empty"};
  *job = jobs_.find(job_id);
  // Another principal's job is not found: its existence is no one else's business.
  if (*job && !constant_time_equal((*job)->owner(), principal)) job->reset();
  if (!*job)
    return {grpc::StatusCode::NOT_FOUND, "job_id: no job '" +
                                             printable_text(job_id, kMaxQuotedFieldBytes) +
                                             "' (unknown or expired)"};
  return grpc::Status::OK;
}

grpc::Status UkesService::submit(grpc::CallbackServerContext* context, const std::string& principal,
                                 const v1::SubmitJobRequest& request, std::shared_ptr<Job>* job) {
  try {
    *job = jobs_.submit(request, principal);
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
  } catch (...) {
    return exception_status(context);
  }
}

#define UKES_DEFINE_RAW_UNARY(Method, handler)                                            \
  grpc::ServerUnaryReactor* UkesService::Method(grpc::CallbackServerContext* context,     \
                                                const grpc::ByteBuffer* request,          \
                                                grpc::ByteBuffer* response) {             \
    std::string principal;                                                                \
    if (const grpc::Status s = authenticate(context, &principal); !s.ok())                \
      return finish(context, s);                                                          \
    return unary<v1::Method##Request, v1::Method##Response>(                              \
        context, *request, response,                                                      \
        [&](const auto& in, auto& out) { return handler(context, principal, in, out); }); \
  }
UKES_UNARY_METHODS(UKES_DEFINE_RAW_UNARY)
#undef UKES_DEFINE_RAW_UNARY

namespace {

// ListModels pages (AIP-158): the default and largest page sizes, and the reply size a page stays
// under (a stock client takes 4 MiB; a model without its definition is a few KB at most).
constexpr int kDefaultPageSize = 100;
constexpr int kMaxPageSize = 1000;
constexpr std::size_t kMaxListReplyBytes = (std::size_t{1} << 20) - (std::size_t{64} << 10);

// A page token names the place where the next page starts: "c<k>" the k-th catalogue model,
// "r<order>" the registered models after that registration order (ModelRegistry::Entry).
struct PagePlace {
  bool catalogue = true;
  std::int64_t at = 0;
};

std::optional<PagePlace> parse_page_token(const std::string& token) {
  if (token.empty()) return PagePlace{};
  if (token.size() < 2 || token.size() > 20 || (token[0] != 'c' && token[0] != 'r'))
    return std::nullopt;
  PagePlace place{token[0] == 'c', 0};
  for (std::size_t k = 1; k < token.size(); ++k) {
    if (token[k] < '0' || token[k] > '9') return std::nullopt;
    place.at = place.at * 10 + (token[k] - '0');
  }
  return place;
}

// Adds `model` without its definition unless the reply would pass the size a page stays under
// (the first model of a page always goes in: without its definition it is a few KB, its names
// being of 64 characters at most, docs/MODEL_FORMAT.md).
bool add_listed(const ModelInfo& model, v1::ListModelsResponse& response) {
  v1::Model listed;
  model_to_proto(model, &listed);
  listed.clear_definition_json();
  if (response.models_size() > 0 &&
      response.ByteSizeLong() + listed.ByteSizeLong() + 16 > kMaxListReplyBytes)
    return false;
  *response.add_models() = std::move(listed);
  return true;
}

}  // namespace

grpc::Status UkesService::list_models(grpc::CallbackServerContext*, const std::string& principal,
                                      const v1::ListModelsRequest& request,
                                      v1::ListModelsResponse& response) {
  if (request.page_size() < 0)
    return {grpc::StatusCode::INVALID_ARGUMENT, "page_size: must be >= 0"};
  const auto place = parse_page_token(request.page_token());
  if (!place)
    return {grpc::StatusCode::INVALID_ARGUMENT,
            "page_token: not a token from an earlier ListModels reply"};
  const int page_size =
      request.page_size() == 0 ? kDefaultPageSize : std::min(request.page_size(), kMaxPageSize);
  const auto& catalogue = catalogue_info();
  std::int64_t after = place->catalogue ? 0 : place->at;
  if (place->catalogue) {
    for (auto k = static_cast<std::size_t>(place->at); k < catalogue.size(); ++k) {
      if (response.models_size() == page_size || !add_listed(catalogue[k], response)) {
        response.set_next_page_token("c" + std::to_string(k));
        return grpc::Status::OK;
      }
    }
  }
  // One more than fits, to tell whether another page follows.
  const auto registered =
      jobs_.models().list(principal, after, static_cast<std::size_t>(page_size) + 1);
  for (const auto& entry : registered) {
    if (response.models_size() == page_size || !add_listed(*entry.model, response)) {
      response.set_next_page_token("r" + std::to_string(after));
      return grpc::Status::OK;
    }
    after = entry.order;
  }
  return grpc::Status::OK;
}

grpc::Status UkesService::register_model(grpc::CallbackServerContext* context,
                                         const std::string& principal,
                                         const v1::RegisterModelRequest& request,
                                         v1::RegisterModelResponse& response) {
  try {
    if (request.definition_json().size() > kMaxDefinitionBytes)
      throw LimitError("definition_json",
                       "larger than " + std::to_string(kMaxDefinitionBytes) + " bytes");
    const nlohmann::json doc = parse_spec_text(request.definition_json());
    const auto model = jobs_.register_model(principal, user_model_from_json(doc, "definition"));
    response.set_model_id(model_id(*model));
    model_to_proto(*model, response.mutable_model());
    log_event(LogLevel::kInfo, "model_registered",
              {{"peer", context->peer()}, {"model_id", model_id(*model)}});
    return grpc::Status::OK;
  } catch (const LimitError& e) {
    context->AddTrailingMetadata(kFieldMetadataKey, e.field());
    return {grpc::StatusCode::RESOURCE_EXHAUSTED, e.what()};
  } catch (const SpecError& e) {
    context->AddTrailingMetadata(kFieldMetadataKey, e.field());
    return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
  }
}

grpc::Status UkesService::delete_model(grpc::CallbackServerContext* context,
                                       const std::string& principal,
                                       const v1::DeleteModelRequest& request,
                                       v1::DeleteModelResponse&) {
  if (!jobs_.delete_model(principal, request.model_id()))
    return {grpc::StatusCode::NOT_FOUND,
            "model_id: you have no registered model '" +
                printable_text(request.model_id(), kMaxQuotedFieldBytes) + "'"};
  log_event(LogLevel::kInfo, "model_deleted",
            {{"peer", context->peer()}, {"model_id", request.model_id()}});
  return grpc::Status::OK;
}

grpc::Status UkesService::describe_model(grpc::CallbackServerContext*, const std::string& principal,
                                         const v1::DescribeModelRequest& request,
                                         v1::DescribeModelResponse& response) {
  if (request.name().empty())
    return {grpc::StatusCode::INVALID_ARGUMENT, "name: must not be empty"};
  const auto registered = jobs_.models().find(principal, request.name());
  const ModelInfo* m = registered ? registered.get() : find_model(request.name());
  if (m == nullptr)
    return {grpc::StatusCode::NOT_FOUND,
            "name: unknown model '" + printable_text(request.name(), kMaxQuotedFieldBytes) + "'"};
  model_to_proto(*m, response.mutable_model());
  return grpc::Status::OK;
}

grpc::Status UkesService::get_server_info(grpc::CallbackServerContext*,
                                          const std::string& principal,
                                          const v1::GetServerInfoRequest&,
                                          v1::GetServerInfoResponse& response) {
  const ServerOptions& o = jobs_.options();
  response.set_version(version());
  response.add_backends("cpu");
  const GpuAvailability gpu = gpu_availability();
  if (jobs_.gpu_ready()) {
    response.add_backends("gpu");
    v1::GpuInfo* g = response.mutable_gpu();
    g->set_name(gpu.info.name);
    g->set_compute_capability(std::to_string(gpu.info.compute_major) + "." +
                              std::to_string(gpu.info.compute_minor));
    g->set_multiprocessors(gpu.info.multiprocessors);
    g->set_memory_bytes(static_cast<std::int64_t>(gpu.info.total_memory));
    g->set_driver_version(cuda_version_text(gpu.info.driver_version));
    g->set_runtime_version(cuda_version_text(gpu.info.runtime_version));
    g->set_devices(static_cast<std::int32_t>(usable_gpu_devices().size()));
  } else {
    response.set_gpu_unavailable_reason(
        o.device == Device::kCpu ? "this server runs with --device cpu" : gpu.reason);
  }
  response.set_default_backend(jobs_.gpu_ready() ? "gpu" : "cpu");
  response.set_cpu_threads(jobs_.threads_per_job());
  response.set_max_concurrent_jobs(o.max_concurrent_jobs);
  response.set_max_queued_jobs(o.max_queued_jobs);
  response.set_max_systems(o.limits.max_systems);
  response.set_max_samples(o.limits.max_samples);
  response.set_max_trajectory_bytes(o.limits.max_trajectory_bytes);
  response.set_memory_budget_bytes(o.memory_budget_bytes);
  response.set_queued_jobs(jobs_.queued_jobs());
  response.set_running_jobs(jobs_.running_jobs());
  response.set_own_queued_jobs(jobs_.queued_jobs(principal));
  response.set_own_running_jobs(jobs_.running_jobs(principal));
  response.set_max_models_per_principal(jobs_.models().limits().max_models);
  response.set_max_model_bytes_per_principal(jobs_.models().limits().max_bytes);
  return grpc::Status::OK;
}

grpc::Status UkesService::submit_job(grpc::CallbackServerContext* context,
                                     const std::string& principal,
                                     const v1::SubmitJobRequest& request,
                                     v1::SubmitJobResponse& response) {
  std::shared_ptr<Job> job;
  const grpc::Status s = submit(context, principal, request, &job);
  if (s.ok()) {
    response.set_job_id(job->id());
    response.set_queue_position(jobs_.queue_position(*job));
  }
  return s;
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* UkesService::StreamJobResults(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* bytes) {
  v1::StreamJobResultsRequest request;
  std::shared_ptr<Job> job;
  std::string principal;
  grpc::Status s = authenticate(context, &principal);
  if (s.ok()) s = parse_request(*bytes, request);
  if (s.ok()) s = find(request.job_id(), principal, &job);
  if (!s.ok()) return new ErrorStream(s);
  auto slot = stream_slot(context, &s);
  if (!slot) return new ErrorStream(s);
  if (request.resume_after() < 0)
    return new ErrorStream({grpc::StatusCode::INVALID_ARGUMENT, "resume_after: must be >= 0"});
  // The log of an ended job is complete: resuming past its end is a client error.
  if (job->ended() && request.resume_after() > job->log().size())
    return new ErrorStream(
        {grpc::StatusCode::OUT_OF_RANGE,
         "resume_after: the job has only " + std::to_string(job->log().size()) + " chunks"});
  return ResultStream::start(std::move(job), request.resume_after(), context->peer(),
                             std::move(slot));
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* UkesService::Simulate(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* bytes) {
  v1::SimulateRequest request;
  std::shared_ptr<Job> job;
  std::string principal;
  grpc::Status s = authenticate(context, &principal);
  if (s.ok()) s = parse_request(*bytes, request);
  std::unique_ptr<StreamLimit::Slot> slot;
  if (s.ok()) slot = stream_slot(context, &s);  // before the job exists: a refusal submits nothing
  if (s.ok()) s = submit(context, principal, request.job(), &job);
  if (!s.ok()) return new ErrorStream(s);
  return ResultStream::start(std::move(job), 0, context->peer(), std::move(slot));
}

grpc::Status UkesService::get_job(grpc::CallbackServerContext*, const std::string& principal,
                                  const v1::GetJobRequest& request, v1::GetJobResponse& response) {
  std::shared_ptr<Job> job;
  const grpc::Status s = find(request.job_id(), principal, &job);
  if (!s.ok()) return s;
  response.set_job_id(job->id());
  response.set_state(job->state());
  // A job that could not be run again after a restart has no parsed model.
  if (job->spec().model != nullptr) response.set_model(job->spec().model->name);
  v1::Progress progress = job->progress();
  progress.set_systems_total(job->spec().batch.count);
  *response.mutable_progress() = progress;
  response.set_chunks(job->log().size());
  response.set_queue_position(jobs_.queue_position(*job));
  response.set_message(job->message());
  return grpc::Status::OK;
}

grpc::Status UkesService::cancel_job(grpc::CallbackServerContext*, const std::string& principal,
                                     const v1::CancelJobRequest& request,
                                     v1::CancelJobResponse& response) {
  std::shared_ptr<Job> job;
  const grpc::Status s = find(request.job_id(), principal, &job);
  if (!s.ok()) return s;
  response.set_state(jobs_.cancel(*job));
  return grpc::Status::OK;
}

}  // namespace ukes::server
