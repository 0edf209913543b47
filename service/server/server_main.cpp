// ukes-server: the ukes.v1 gRPC service. Listens on loopback unless told otherwise; health checking
// (grpc.health.v1) and server reflection are on; logs are JSON lines on stderr. SIGINT / SIGTERM
// stop it gracefully: streams get a moment to finish, running jobs are cancelled.
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "kernels/backend/gpu/gpu_backend.hpp"
#include "service/engine/version.hpp"
#include "service/runspec/printable_text.hpp"
#include "service/server/job_manager.hpp"
#include "service/server/log.hpp"
#include "service/server/transport_security.hpp"
#include "service/server/ukes_service.hpp"

namespace {

using ukes::server::log_event;
using ukes::server::LogLevel;

// Protobuf's own diagnostics (a request with a string field that is not UTF-8, say) as JSON log
// lines like every other, not free text on stderr.
void log_protobuf(google::protobuf::LogLevel level, const char*, int, const std::string& message) {
  log_event(level >= google::protobuf::LOGLEVEL_ERROR ? LogLevel::kWarning : LogLevel::kInfo,
            "protobuf", {{"message", ukes::printable_text(message, ukes::kMaxQuotedReasonBytes)}});
}

// Writes the port to `path` atomically (readers never see a partial file).
void write_port_file(const std::string& path, int port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << port << "\n";
    if (!out) throw std::runtime_error("cannot write port file " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace

int main(int argc, char** argv) {
  ukes::server::ServerOptions o;
  CLI::App app{"ukes-server: ensembles of constrained mechanical systems over gRPC (ukes.v1)",
               "ukes-server"};
  app.set_version_flag("--version", std::string("ukes-server ") + ukes::version());
  std::string device = "auto";
  double memory_mb = static_cast<double>(o.memory_budget_bytes >> 20);
  double max_trajectory_mb = static_cast<double>(o.limits.max_trajectory_bytes >> 20);
  double model_mb = static_cast<double>(o.model_limits.max_bytes >> 20);
  double max_request_mb = static_cast<double>(o.max_request_bytes >> 20);
  app.add_option("--listen", o.listen, "Address to listen on (default: loopback only)")
      ->capture_default_str();
  app.add_option("--port", o.port, "Port (0: any free port, see --port-file)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app.add_option("--port-file", o.port_file, "Write the bound port here once listening");
  app.add_option("--data-dir", o.data_dir,
                 "Keep jobs here (an SQLite job store): they survive restarts and kills. "
                 "Default: jobs in memory only, results beyond the memory budget spilled to a "
                 "private temporary directory removed at exit");
  app.add_flag("--set-aside-store", o.set_aside_damaged_store,
               "When the job store under --data-dir is damaged (fails its checks at start), "
               "move it aside (ukes-jobs.sqlite.damaged-<time>) and start with an empty one, "
               "instead of refusing to start");
  app.add_option("--max-models-per-principal", o.model_limits.max_models,
                 "Registered models each principal may keep (RegisterModel)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--max-model-mb-per-principal", model_mb,
                 "Registered definitions' text each principal may keep")
      ->check(CLI::Range(1.0, 1e6))
      ->capture_default_str();
  app.add_option("--memory-budget-mb", memory_mb, "Results held in memory, all jobs together")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-systems", o.limits.max_systems, "Most systems in one job")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{2147483647}))
      ->capture_default_str();
  app.add_option("--max-samples", o.limits.max_samples, "Most output samples per system")
      ->check(CLI::Range(std::int64_t{2}, std::int64_t{2147483647}))
      ->capture_default_str();
  app.add_option("--max-trajectory-mb", max_trajectory_mb, "Most trajectory data in one job")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-request-mb", max_request_mb, "Largest request message")
      ->check(CLI::Range(1.0, 2047.0))
      ->capture_default_str();
  app.add_option("--max-concurrent-jobs", o.max_concurrent_jobs, "Jobs running at once")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--max-streams", o.max_streams,
                 "Result streams open at once (each may hold one chunk of about 1 MiB)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--max-queued-jobs", o.max_queued_jobs, "Jobs waiting at most")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--threads", o.threads, "CPU threads per running job (default: all)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--device", device, "Backend: auto, cpu or gpu")
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
      ->capture_default_str();
  app.add_option("--result-ttl-s", o.result_ttl_s, "Finished jobs are dropped this long after")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--fetched-ttl-s", o.fetched_ttl_s,
                 "... or this long after a client received their last chunk")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--tls-cert", o.tls_cert, "Serve TLS with this certificate chain (PEM)");
  app.add_option("--tls-key", o.tls_key, "... and this private key (PEM)");
  app.add_option("--tls-client-ca", o.tls_client_ca,
                 "Require client certificates signed by this CA (PEM): mutual TLS");
  app.add_option("--token-file", o.token_file,
                 "Bearer tokens, `NAME TOKEN` per line: callers must present one (needs TLS)");
  app.add_flag("--insecure", o.insecure,
               "Listen beyond loopback without TLS and authentication (anyone reaching the port "
               "can use, read and cancel every job)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  o.memory_budget_bytes = static_cast<std::int64_t>(memory_mb * (1 << 20));
  o.model_limits.max_bytes = static_cast<std::int64_t>(model_mb * (1 << 20));
  o.limits.max_trajectory_bytes = static_cast<std::int64_t>(max_trajectory_mb * (1 << 20));
  o.max_request_bytes = static_cast<std::int64_t>(max_request_mb * (1 << 20));
  o.device = device == "cpu"   ? ukes::Device::kCpu
             : device == "gpu" ? ukes::Device::kGpu
                               : ukes::Device::kAuto;
  // The one line that says which backend jobs get, and why not the GPU.
  if (o.device != ukes::Device::kCpu) {
    const ukes::GpuAvailability gpu = ukes::gpu_availability();
    if (gpu.available) {
      log_event(LogLevel::kInfo, "backend",
                {{"backend", "gpu"},
                 {"gpu", gpu.info.name},
                 {"memory_mb", static_cast<std::int64_t>(gpu.info.total_memory >> 20)},
                 {"driver", ukes::cuda_version_text(gpu.info.driver_version)},
                 {"module", gpu.module}});
    } else if (o.device == ukes::Device::kGpu) {
      std::fprintf(stderr, "ukes-server: --device gpu: no usable GPU: %s\n", gpu.reason.c_str());
      return 2;
    } else {
      log_event(LogLevel::kInfo, "backend", {{"backend", "cpu"}, {"reason", gpu.reason}});
    }
  } else {
    log_event(LogLevel::kInfo, "backend", {{"backend", "cpu"}, {"reason", "--device cpu"}});
  }

  google::protobuf::SetLogHandler(&log_protobuf);

  // Signals are taken by one thread with sigwait; every other thread inherits the blocked mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::shared_ptr<grpc::ServerCredentials> credentials;
  std::unique_ptr<ukes::server::Authenticator> auth;
  try {
    credentials = ukes::server::server_credentials(o);
    auth = std::make_unique<ukes::server::Authenticator>(o.token_file, !o.tls_client_ca.empty());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ukes-server: %s\n", e.what());
    return 2;
  }
  if (!ukes::server::is_loopback(o.listen) && o.insecure)
    log_event(LogLevel::kWarning, "insecure",
              {{"listen", o.listen},
               {"reason", "--insecure: no TLS or authentication on a port other machines reach"}});

  std::unique_ptr<ukes::server::JobManager> jobs;
  try {
    jobs = std::make_unique<ukes::server::JobManager>(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ukes-server: %s\n", e.what());
    return 1;
  }
  ukes::server::UkesService service(*jobs, *auth);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  const std::string address =
      (o.listen.find(':') != std::string::npos ? "[" + o.listen + "]" : o.listen) + ":" +
      std::to_string(o.port);
  int bound_port = 0;
  builder.AddListeningPort(address, credentials, &bound_port);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(static_cast<int>(o.max_request_bytes));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || bound_port == 0) {
    std::fprintf(stderr, "ukes-server: cannot listen on %s\n", address.c_str());
    return 1;
  }
  server->GetHealthCheckService()->SetServingStatus("ukes.v1.UkesService", true);
  try {
    if (!o.port_file.empty()) write_port_file(o.port_file, bound_port);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ukes-server: %s\n", e.what());
    server->Shutdown();
    return 1;
  }
  log_event(LogLevel::kInfo, "listening",
            {{"address", o.listen},
             {"port", bound_port},
             {"version", ukes::version()},
             {"data_dir", jobs->data_dir()},
             {"threads_per_job", jobs->threads_per_job()},
             {"max_concurrent_jobs", o.max_concurrent_jobs},
             {"memory_budget_bytes", o.memory_budget_bytes},
             {"tls", !o.tls_cert.empty()},
             {"client_certificates", !o.tls_client_ca.empty()},
             {"tokens", !o.token_file.empty()}});

  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    log_event(LogLevel::kInfo, "stopping", {{"signal", sig == SIGINT ? "SIGINT" : "SIGTERM"}});
    server->GetHealthCheckService()->Shutdown();
    // Memory-only jobs end cancelled (their streams see the JobEnd); durable ones stop without
    // ending, for the next server on the data directory to run again.
    jobs->shutdown();
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  });
  server->Wait();
  waiter.join();
  log_event(LogLevel::kInfo, "stopped");
  return 0;
}
