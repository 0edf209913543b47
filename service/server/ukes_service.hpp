// The ukes.v1.UkesService gRPC service (callback API). Result streams are write reactors that
// read the job's result log one chunk at a time: a write is started only when the previous one has
// completed, so a slow client costs the server one chunk of buffering, never more.
#pragma once

#include <atomic>
#include <memory>

#include "service/server/auth.hpp"
#include "service/server/job_manager.hpp"
#include "ukes/v1/ukes.grpc.pb.h"

namespace ukes::server {

// The unary methods of ukes.v1.UkesService (the protocol's name, the typed handler's).
#define UKES_UNARY_METHODS(X)       \
  X(ListModels, list_models)        \
  X(DescribeModel, describe_model)  \
  X(RegisterModel, register_model)  \
  X(DeleteModel, delete_model)      \
  X(GetServerInfo, get_server_info) \
  X(SubmitJob, submit_job)          \
  X(GetJob, get_job)                \
  X(CancelJob, cancel_job)

// Every method is registered raw, bytes in and bytes out: gRPC's callback API answers a request
// that does not parse (malformed protobuf, a string field that is not UTF-8) with UNIMPLEMENTED
// and no message, so the service parses requests itself and answers INVALID_ARGUMENT.
using RawUkesService = v1::UkesService::WithRawCallbackMethod_ListModels<
    v1::UkesService::WithRawCallbackMethod_DescribeModel<
        v1::UkesService::WithRawCallbackMethod_GetServerInfo<
            v1::UkesService::WithRawCallbackMethod_SubmitJob<
                v1::UkesService::WithRawCallbackMethod_StreamJobResults<
                    v1::UkesService::WithRawCallbackMethod_Simulate<
                        v1::UkesService::WithRawCallbackMethod_GetJob<
                            v1::UkesService::WithRawCallbackMethod_CancelJob<
                                v1::UkesService::WithRawCallbackMethod_RegisterModel<
                                    v1::UkesService::WithRawCallbackMethod_DeleteModel<
                                        v1::UkesService::Service>>>>>>>>>>;

// Counts open result streams against ServerOptions::max_streams.
class StreamLimit {
 public:
  explicit StreamLimit(int limit) : limit_(limit) {}
  // Held by a stream while it is open.
  class Slot {
   public:
    explicit Slot(StreamLimit& owner) : owner_(owner) {}
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() { owner_.open_.fetch_sub(1); }

   private:
    StreamLimit& owner_;
  };
  // A slot, or null when `limit` streams are open.
  std::unique_ptr<Slot> try_acquire();
  int limit() const { return limit_; }

 private:
  const int limit_;
  std::atomic<int> open_{0};
};

class UkesService final : public RawUkesService {
 public:
  // `auth` says who calls (service/server/auth.hpp); it outlives the service.
  UkesService(JobManager& jobs, const Authenticator& auth)
      : jobs_(jobs), auth_(auth), streams_(jobs.options().max_streams) {}

#define UKES_DECLARE_RAW_UNARY(Method, handler)                                                 \
  grpc::ServerUnaryReactor* Method(grpc::CallbackServerContext* context,                        \
                                   const grpc::ByteBuffer* request, grpc::ByteBuffer* response) \
      override;
  UKES_UNARY_METHODS(UKES_DECLARE_RAW_UNARY)
#undef UKES_DECLARE_RAW_UNARY
  grpc::ServerWriteReactor<grpc::ByteBuffer>* StreamJobResults(
      grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* Simulate(grpc::CallbackServerContext* context,
                                                       const grpc::ByteBuffer* request) override;

 private:
  grpc::Status list_models(grpc::CallbackServerContext* context, const std::string& principal,
                           const v1::ListModelsRequest& request, v1::ListModelsResponse& response);
  grpc::Status describe_model(grpc::CallbackServerContext* context, const std::string& principal,
                              const v1::DescribeModelRequest& request,
                              v1::DescribeModelResponse& response);
  grpc::Status register_model(grpc::CallbackServerContext* context, const std::string& principal,
                              const v1::RegisterModelRequest& request,
                              v1::RegisterModelResponse& response);
  grpc::Status delete_model(grpc::CallbackServerContext* context, const std::string& principal,
                            const v1::DeleteModelRequest& request,
                            v1::DeleteModelResponse& response);
  grpc::Status get_server_info(grpc::CallbackServerContext* context, const std::string& principal,
                               const v1::GetServerInfoRequest& request,
                               v1::GetServerInfoResponse& response);
  grpc::Status submit_job(grpc::CallbackServerContext* context, const std::string& principal,
                          const v1::SubmitJobRequest& request, v1::SubmitJobResponse& response);
  grpc::Status get_job(grpc::CallbackServerContext* context, const std::string& principal,
                       const v1::GetJobRequest& request, v1::GetJobResponse& response);
  grpc::Status cancel_job(grpc::CallbackServerContext* context, const std::string& principal,
                          const v1::CancelJobRequest& request, v1::CancelJobResponse& response);

  // Submits for `principal`, mapping validation errors to their status codes (OK status: *job
  // is set).
  grpc::Status submit(grpc::CallbackServerContext* context, const std::string& principal,
                      const v1::SubmitJobRequest& request, std::shared_ptr<Job>* job);
  // The job `job_id` if `principal` owns it; NOT_FOUND otherwise, as for an unknown id.
  grpc::Status find(const std::string& job_id, const std::string& principal,
                    std::shared_ptr<Job>* job) const;
  // The caller's principal, or UNAUTHENTICATED.
  grpc::Status authenticate(grpc::CallbackServerContext* context, std::string* principal) const;
  // A slot for a new result stream, or null with RESOURCE_EXHAUSTED (and a retry hint) in *error.
  std::unique_ptr<StreamLimit::Slot> stream_slot(grpc::CallbackServerContext* context,
                                                 grpc::Status* error);

  JobManager& jobs_;
  const Authenticator& auth_;
  StreamLimit streams_;
};

}  // namespace ukes::server
