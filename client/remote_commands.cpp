// The subcommands that talk to a ukes-server: `run --server`, submit, attach, status, cancel, info.
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "client/commands.hpp"
#include "client/remote.hpp"

namespace ukes::cli {

namespace {

// Unary calls answer at once; a server that does not is reported rather than waited on forever.
constexpr std::chrono::seconds kCallDeadline{60};

void set_deadline(grpc::ClientContext& context) {
  context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
}

std::unique_ptr<v1::UkesService::Stub> connect(const std::string& server) {
  return v1::UkesService::NewStub(make_channel(server));
}

int print_json(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string text;
  if (!google::protobuf::util::MessageToJsonString(message, &text, options).ok()) {
    std::fprintf(stderr, "ukes: cannot print the answer as JSON\n");
    return kExitFailure;
  }
  std::fputs(text.c_str(), stdout);
  if (text.empty() || text.back() != '\n') std::fputc('\n', stdout);
  return kExitOk;
}

// "job j-1 running: 4096 / 100000 systems (4.1%), 1.23e+06 system-steps/s, ETA 12 s"
std::string status_line(const v1::GetJobResponse& job) {
  std::string line = "job " + job.job_id() + " " + job_state_name(job.state());
  if (job.state() == v1::JOB_STATE_QUEUED && job.queue_position() > 0)
    line += " (queue position " + std::to_string(job.queue_position()) + ")";
  line += ": " + progress_text(job.progress());
  const bool ended = is_final(job.state());
  if (ended && job.progress().elapsed_s() > 0) {
    char elapsed[64];
    std::snprintf(elapsed, sizeof elapsed, ", elapsed %.3g s", job.progress().elapsed_s());
    line += elapsed;
  }
  if (!job.message().empty()) line += " (" + job.message() + ")";
  return line;
}

void print_server_info(const std::string& server, const v1::GetServerInfoResponse& info) {
  std::string backends;
  for (const auto& b : info.backends()) backends += (backends.empty() ? "" : ", ") + b;
  std::printf("server %s: ukes %s\n", server.c_str(), info.version().c_str());
  std::printf("backends: %s (default %s)\n", backends.c_str(), info.default_backend().c_str());
  if (info.has_gpu()) {
    const v1::GpuInfo& g = info.gpu();
    std::printf("gpu: %d x %s (compute capability %s, %d SMs, %.1f GiB; driver %s, runtime %s)\n",
                std::max(1, g.devices()), g.name().c_str(), g.compute_capability().c_str(),
                g.multiprocessors(),
                static_cast<double>(g.memory_bytes()) / (1024.0 * 1024.0 * 1024.0),
                g.driver_version().c_str(), g.runtime_version().c_str());
  } else if (!info.gpu_unavailable_reason().empty()) {
    std::printf("gpu: none (%s)\n", info.gpu_unavailable_reason().c_str());
  }
  std::printf("threads per job: %d\n", info.cpu_threads());
  std::printf("limits per job: %lld systems, %lld samples, %.6g MiB of trajectories\n",
              static_cast<long long>(info.max_systems()),
              static_cast<long long>(info.max_samples()),
              static_cast<double>(info.max_trajectory_bytes()) / (1024.0 * 1024.0));
  std::printf("memory budget: %.6g MiB (results in memory and running jobs' working memory)\n",
              static_cast<double>(info.memory_budget_bytes()) / (1024.0 * 1024.0));
  std::printf(
      "jobs: %d running (at most %d), %d queued (at most %d); yours: %d running, %d "
      "queued\n",
      info.running_jobs(), info.max_concurrent_jobs(), info.queued_jobs(), info.max_queued_jobs(),
      info.own_running_jobs(), info.own_queued_jobs());
  std::printf("registered models: at most %d and %.6g MiB of definitions per principal\n",
              info.max_models_per_principal(),
              static_cast<double>(info.max_model_bytes_per_principal()) / (1024.0 * 1024.0));
}

}  // namespace

std::string default_server() {
  const char* env = std::getenv("UKES_SERVER");
  return env != nullptr && *env != '\0' ? env : "127.0.0.1:50051";
}

int run_on_server(const RunOptions& options) {
  if (options.threads > 0) {
    std::fprintf(stderr, "ukes: --threads cannot be used with --server (the server decides)\n");
    return kExitUsage;
  }
  std::vector<std::string> servers = split_servers(options.server);
  if (servers.empty()) {
    std::fprintf(stderr, "ukes: --server names no server\n");
    return kExitUsage;
  }
  if (options.each_address) {
    try {
      servers = each_address(servers);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ukes: %s\n", e.what());
      return kExitFailure;
    }
  }
  const ResultFiles files{options.out, options.h5};
  std::string text;
  if (const int rc = load_spec_text(options.spec, options.count, text, options.devices);
      rc != kExitOk)
    return rc;
  if (const int rc = check_result_files(files); rc != kExitOk) return rc;
  if (servers.size() > 1 || options.shards > 1 || options.each_address) {
    const int shards = options.shards > 0 ? options.shards : static_cast<int>(servers.size());
    return run_sharded(servers, shards, text, files);
  }

  v1::SimulateRequest request;
  request.mutable_job()->set_spec_json(text);
  const auto stub = connect(servers.front());
  return follow_job(
      *stub, servers.front(),
      [&request](v1::UkesService::Stub& s, grpc::ClientContext& context) {
        return std::unique_ptr<ResultReader>(s.Simulate(&context, request));
      },
      files);
}

int submit_command(const SubmitOptions& options) {
  std::string text;
  if (const int rc = load_spec_text(options.spec, options.count, text); rc != kExitOk) return rc;
  v1::SubmitJobRequest request;
  request.set_spec_json(text);
  request.set_timeout_s(options.timeout_s);
  if (options.no_summaries) request.set_system_summaries(false);

  const auto stub = connect(options.server);
  v1::SubmitJobResponse response;
  grpc::Status status;
  for (QueueWait queue;;) {
    grpc::ClientContext context;
    set_deadline(context);
    status = stub->SubmitJob(&context, request, &response);
    if (status.ok() || !queue.again(context, status)) break;
  }
  if (!status.ok()) return report_rpc_error(status, options.server);
  std::printf("%s\n", response.job_id().c_str());
  std::fflush(stdout);
  return kExitOk;
}

int attach_command(const AttachOptions& options) {
  const ResultFiles files{options.out, options.h5};
  if (const int rc = check_result_files(files); rc != kExitOk) return rc;
  v1::StreamJobResultsRequest request;
  request.set_job_id(options.job_id);
  const auto stub = connect(options.server);
  return follow_job(
      *stub, options.server,
      [&request](v1::UkesService::Stub& s, grpc::ClientContext& context) {
        return std::unique_ptr<ResultReader>(s.StreamJobResults(&context, request));
      },
      files);
}

int status_command(const std::string& job_id, const std::string& server, bool json) {
  v1::GetJobRequest request;
  request.set_job_id(job_id);
  const auto stub = connect(server);
  grpc::ClientContext context;
  set_deadline(context);
  v1::GetJobResponse response;
  const grpc::Status status = stub->GetJob(&context, request, &response);
  if (!status.ok()) return report_rpc_error(status, server);
  if (json) return print_json(response);
  std::printf("%s\n", status_line(response).c_str());
  return kExitOk;
}

int cancel_command(const std::string& job_id, const std::string& server) {
  v1::CancelJobRequest request;
  request.set_job_id(job_id);
  const auto stub = connect(server);
  grpc::ClientContext context;
  set_deadline(context);
  v1::CancelJobResponse response;
  const grpc::Status status = stub->CancelJob(&context, request, &response);
  if (!status.ok()) return report_rpc_error(status, server);
  const bool stopping = response.state() == v1::JOB_STATE_RUNNING;
  std::printf("job %s: %s%s\n", job_id.c_str(), job_state_name(response.state()),
              stopping ? " (cancel requested: it stops shortly)" : "");
  return kExitOk;
}

int server_models_command(const std::string& server, bool json) {
  const auto stub = connect(server);
  v1::ListModelsResponse response;  // every page's models, in order
  v1::ListModelsRequest request;
  do {
    grpc::ClientContext context;
    set_deadline(context);
    v1::ListModelsResponse page;
    const grpc::Status status = stub->ListModels(&context, request, &page);
    if (!status.ok()) return report_rpc_error(status, server);
    for (v1::Model& m : *page.mutable_models()) *response.add_models() = std::move(m);
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  if (json) return print_json(response);
  std::printf("%-28s %3s %9s %9s  %s\n", "NAME", "N", "POSITION", "VELOCITY", "ID (user models)");
  for (const v1::Model& m : response.models())
    std::printf("%-28s %3d %9d %9d  %s\n", m.name().c_str(), m.n(), m.position_rows(),
                m.velocity_rows(), m.id().c_str());
  return kExitOk;
}

int register_command(const std::string& path, const std::string& server) {
  std::string definition;
  if (const int rc = read_definition_file(path, definition); rc != kExitOk) return rc;
  const auto stub = connect(server);
  grpc::ClientContext context;
  set_deadline(context);
  v1::RegisterModelRequest request;
  request.set_definition_json(definition);
  v1::RegisterModelResponse response;
  const grpc::Status status = stub->RegisterModel(&context, request, &response);
  if (!status.ok()) return report_rpc_error(status, server);
  std::printf("%s\n", response.model_id().c_str());
  return kExitOk;
}

int delete_model_command(const std::string& id, const std::string& server) {
  const auto stub = connect(server);
  grpc::ClientContext context;
  set_deadline(context);
  v1::DeleteModelRequest request;
  request.set_model_id(id);
  v1::DeleteModelResponse response;
  const grpc::Status status = stub->DeleteModel(&context, request, &response);
  if (!status.ok()) return report_rpc_error(status, server);
  std::printf("deleted %s\n", id.c_str());
  return kExitOk;
}

int info_command(const std::string& server, bool json) {
  const auto stub = connect(server);
  grpc::ClientContext context;
  set_deadline(context);
  v1::GetServerInfoResponse response;
  const grpc::Status status = stub->GetServerInfo(&context, v1::GetServerInfoRequest{}, &response);
  if (!status.ok()) return report_rpc_error(status, server);
  if (json) return print_json(response);
  print_server_info(server, response);
  return kExitOk;
}

}  // namespace ukes::cli
