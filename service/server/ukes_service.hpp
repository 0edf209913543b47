// The ukes.v1.UkesService gRPC service (callback API). Result streams are write reactors that
// read the job's result log one chunk at a time: a write is started only when the previous one has
// completed, so a slow client costs the server one chunk of buffering, never more.
#pragma once

#include "service/server/job_manager.hpp"
#include "ukes/v1/ukes.grpc.pb.h"

namespace ukes::server {

class UkesService final : public v1::UkesService::CallbackService {
 public:
  explicit UkesService(JobManager& jobs) : jobs_(jobs) {}

  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* context,
                                       const v1::ListModelsRequest* request,
                                       v1::ListModelsResponse* response) override;
  grpc::ServerUnaryReactor* DescribeModel(grpc::CallbackServerContext* context,
                                          const v1::DescribeModelRequest* request,
                                          v1::DescribeModelResponse* response) override;
  grpc::ServerUnaryReactor* GetServerInfo(grpc::CallbackServerContext* context,
                                          const v1::GetServerInfoRequest* request,
                                          v1::GetServerInfoResponse* response) override;
  grpc::ServerUnaryReactor* SubmitJob(grpc::CallbackServerContext* context,
                                      const v1::SubmitJobRequest* request,
                                      v1::SubmitJobResponse* response) override;
  grpc::ServerWriteReactor<v1::StreamJobResultsResponse>* StreamJobResults(
      grpc::CallbackServerContext* context, const v1::StreamJobResultsRequest* request) override;
  grpc::ServerWriteReactor<v1::StreamJobResultsResponse>* Simulate(
      grpc::CallbackServerContext* context, const v1::SimulateRequest* request) override;
  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* context,
                                   const v1::GetJobRequest* request,
                                   v1::GetJobResponse* response) override;
  grpc::ServerUnaryReactor* CancelJob(grpc::CallbackServerContext* context,
                                      const v1::CancelJobRequest* request,
                                      v1::CancelJobResponse* response) override;

 private:
  // Submits, mapping validation errors to their status codes (OK status: *job is set).
  grpc::Status submit(grpc::CallbackServerContext* context, const v1::SubmitJobRequest& request,
                      std::shared_ptr<Job>* job);
  grpc::Status find(const std::string& job_id, std::shared_ptr<Job>* job) const;

  JobManager& jobs_;
};

}  // namespace ukes::server
