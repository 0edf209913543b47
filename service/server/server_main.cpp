// ukes-server: the ukes.v1 gRPC service. Listens on loopback unless told otherwise; health checking
// (grpc.health.v1) and server reflection are on; logs are JSON lines on stderr. SIGINT / SIGTERM
// stop it gracefully: streams get a moment to finish, running jobs are cancelled.
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
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
using ukes::server::ServerOptions;

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

// The options the command line gives in other units than ServerOptions holds (MiB for bytes, the
// device by name), turned into ServerOptions once it has parsed.
struct CommandLineValues {
  std::string device = "auto";
  double memory_mb, max_trajectory_mb, model_mb, max_request_mb;

  explicit CommandLineValues(const ServerOptions& o)
      : memory_mb(static_cast<double>(o.memory_budget_bytes >> 20)),
        max_trajectory_mb(static_cast<double>(o.limits.max_trajectory_bytes >> 20)),
        model_mb(static_cast<double>(o.model_limits.max_bytes >> 20)),
        max_request_mb(static_cast<double>(o.max_request_bytes >> 20)) {}

  void apply(ServerOptions& o) const {
    o.memory_budget_bytes = static_cast<std::int64_t>(memory_mb * (1 << 20));
    o.model_limits.max_bytes = static_cast<std::int64_t>(model_mb * (1 << 20));
    o.limits.max_trajectory_bytes = static_cast<std::int64_t>(max_trajectory_mb * (1 << 20));
    o.max_request_bytes = static_cast<std::int64_t>(max_request_mb * (1 << 20));
    o.device = device == "cpu"   ? ukes::Device::kCpu
               : device == "gpu" ? ukes::Device::kGpu
                                 : ukes::Device::kAuto;
  }
};

// Where the server listens.
void add_listen_options(CLI::App& app, ServerOptions& o) {
  app.add_option("--listen", o.listen, "Address to listen on (default: loopback only)")
      ->capture_default_str();
  app.add_option("--port", o.port, "Port (0: any free port, see --port-file)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app.add_option("--port-file", o.port_file, "Write the bound port here once listening");
  app.add_option("--health-port", o.health_port,
                 "Also serve grpc.health.v1, and nothing else, in plain text on this port (for "
                 "probes that speak no TLS; 0: any free port, logged)")
      ->check(CLI::Range(0, 65535));
}

// What the server keeps: the job store and the registered models.
void add_store_options(CLI::App& app, ServerOptions& o, CommandLineValues& v) {
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
  app.add_option("--max-model-mb-per-principal", v.model_mb,
                 "Registered definitions' text each principal may keep")
      ->check(CLI::Range(1.0, 1e6))
      ->capture_default_str();
}

// How much one job, one request and all results together may take.
void add_limit_options(CLI::App& app, ServerOptions& o, CommandLineValues& v) {
  app.add_option("--memory-budget-mb", v.memory_mb, "Results held in memory, all jobs together")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-systems", o.limits.max_systems, "Most systems in one job")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{2147483647}))
      ->capture_default_str();
  app.add_option("--max-samples", o.limits.max_samples, "Most output samples per system")
      ->check(CLI::Range(std::int64_t{2}, std::int64_t{2147483647}))
      ->capture_default_str();
  app.add_option("--max-trajectory-mb", v.max_trajectory_mb, "Most trajectory data in one job")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-request-mb", v.max_request_mb, "Largest request message")
      ->check(CLI::Range(1.0, 2047.0))
      ->capture_default_str();
}

// How jobs run: how many at once, on what, and how long they are kept.
void add_job_options(CLI::App& app, ServerOptions& o, CommandLineValues& v) {
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
  app.add_option("--device", v.device, "Backend: auto, cpu or gpu")
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
      ->capture_default_str();
  app.add_option("--devices", o.devices, "The GPUs jobs may use, e.g. 0,2 (default: every one)")
      ->delimiter(',')
      ->check(CLI::Range(0, ukes::kMaxGpuDevices - 1));
  app.add_option("--result-ttl-s", o.result_ttl_s, "Finished jobs are dropped this long after")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--fetched-ttl-s", o.fetched_ttl_s,
                 "... or this long after a client received their last chunk")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
}

// Who may connect: TLS, client certificates, bearer tokens.
void add_security_options(CLI::App& app, ServerOptions& o) {
  app.add_option("--tls-cert", o.tls_cert, "Serve TLS with this certificate chain (PEM)");
  app.add_option("--tls-key", o.tls_key, "... and this private key (PEM)");
  app.add_option("--tls-client-ca", o.tls_client_ca,
                 "Require client certificates signed by this CA (PEM): mutual TLS");
  app.add_option("--token-file", o.token_file,
                 "Bearer tokens, `NAME TOKEN` per line: callers must present one (needs TLS)");
  app.add_flag("--insecure", o.insecure,
               "Listen beyond loopback without TLS and authentication (anyone reaching the port "
               "can use, read and cancel every job)");
}

// The command line into `o`; the exit status when the process ends here (help, version, an
// invalid option).
std::optional<int> parse_command_line(int argc, char** argv, ServerOptions& o) {
  CLI::App app{"ukes-server: ensembles of constrained mechanical systems over gRPC (ukes.v1)",
               "ukes-server"};
  app.set_version_flag("--version", std::string("ukes-server ") + ukes::version());
  CommandLineValues values(o);
  add_listen_options(app, o);
  add_store_options(app, o, values);
  add_limit_options(app, o, values);
  add_job_options(app, o, values);
  add_security_options(app, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  values.apply(o);
  return std::nullopt;
}

// --devices against the GPUs found (`found`, 0 when none is usable); false, said on stderr, for
// a list that names one twice or one that is not here. A valid list restricts this process's GPUs.
bool restrict_devices(const ServerOptions& o, int found) {
  if (o.device == ukes::Device::kCpu && !o.devices.empty()) {
    std::fprintf(stderr, "ukes-server: --devices: --device cpu uses no GPU\n");
    return false;
  }
  for (const int id : o.devices) {
    const char* why = nullptr;
    if (std::count(o.devices.begin(), o.devices.end(), id) > 1) why = "a GPU is listed twice";
    if (found > 0 && id >= found) why = "no such GPU here";
    if (why != nullptr) {
      std::fprintf(stderr, "ukes-server: --devices: %s (GPU %d; %d found)\n", why, id, found);
      return false;
    }
  }
  ukes::restrict_gpu_devices(o.devices);
  return true;
}

// The one line that says which backend jobs get, and why not the GPU. False when --device gpu
// finds no usable GPU, or --devices is wrong (said on stderr): the server does not start.
bool log_backend(const ServerOptions& o) {
  if (o.device == ukes::Device::kCpu) {
    log_event(LogLevel::kInfo, "backend", {{"backend", "cpu"}, {"reason", "--device cpu"}});
    return restrict_devices(o, 0);
  }
  const ukes::GpuAvailability gpu = ukes::gpu_availability();
  if (!restrict_devices(o, gpu.available ? gpu.info.device_count : 0)) return false;
  if (gpu.available) {
    log_event(LogLevel::kInfo, "backend",
              {{"backend", "gpu"},
               {"gpu", gpu.info.name},
               {"memory_mb", static_cast<std::int64_t>(gpu.info.total_memory >> 20)},
               {"driver", ukes::cuda_version_text(gpu.info.driver_version)},
               {"module", gpu.module}});
  } else if (o.device == ukes::Device::kGpu) {
    std::fprintf(stderr, "ukes-server: --device gpu: no usable GPU: %s\n", gpu.reason.c_str());
    return false;
  } else {
    log_event(LogLevel::kInfo, "backend", {{"backend", "cpu"}, {"reason", gpu.reason}});
  }
  return true;
}

// Blocks SIGINT and SIGTERM here, before any other thread starts: every thread inherits the
// blocked mask, so the one that calls sigwait takes them. SIGPIPE is ignored.
sigset_t block_stop_signals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return stop_signals;
}

struct Security {
  std::shared_ptr<grpc::ServerCredentials> credentials;
  std::unique_ptr<ukes::server::Authenticator> auth;
};

// The transport's credentials (TLS or none) and the authenticator of callers; nullopt when the
// files they name cannot be used (said on stderr).
std::optional<Security> build_security(const ServerOptions& o) {
  Security security;
  try {
    security.credentials = ukes::server::server_credentials(o);
    security.auth =
        std::make_unique<ukes::server::Authenticator>(o.token_file, !o.tls_client_ca.empty());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ukes-server: %s\n", e.what());
    return std::nullopt;
  }
  if (!ukes::server::is_loopback(o.listen) && o.insecure)
    log_event(LogLevel::kWarning, "insecure",
              {{"listen", o.listen},
               {"reason", "--insecure: no TLS or authentication on a port other machines reach"}});
  return security;
}

// The job manager, with its store under --data-dir opened (and recovered) when there is one; null
// when it cannot be (said on stderr).
std::unique_ptr<ukes::server::JobManager> open_jobs(const ServerOptions& o) {
  try {
    return std::make_unique<ukes::server::JobManager>(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ukes-server: %s\n", e.what());
    return nullptr;
  }
}

// "HOST:PORT" of --listen (bracketed when IPv6) and `port`.
std::string listen_address(const ServerOptions& o, int port) {
  return (o.listen.find(':') != std::string::npos ? "[" + o.listen + "]" : o.listen) + ":" +
         std::to_string(port);
}

// Starts serving `service` (with health checking and reflection) and publishes the bound port in
// --port-file; null when it cannot listen or write that file (said on stderr).
std::unique_ptr<grpc::Server> start_server(
    const ServerOptions& o, ukes::server::UkesService& service,
    const std::shared_ptr<grpc::ServerCredentials>& credentials, int& bound_port) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  const std::string address = listen_address(o, o.port);
  builder.AddListeningPort(address, credentials, &bound_port);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(static_cast<int>(o.max_request_bytes));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || bound_port == 0) {
    std::fprintf(stderr, "ukes-server: cannot listen on %s\n", address.c_str());
    return nullptr;
  }
  server->GetHealthCheckService()->SetServingStatus("ukes.v1.UkesService", true);
  try {
    if (!o.port_file.empty()) write_port_file(o.port_file, bound_port);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ukes-server: %s\n", e.what());
    server->Shutdown();
    return nullptr;
  }
  return server;
}

// --health-port: a server of its own, in plain text, with the health service alone (the default
// one every server gets), reporting what the main server reports; null when there is none or it
// cannot listen (said on stderr, `failed` set).
std::unique_ptr<grpc::Server> start_health_server(const ServerOptions& o, int& bound_port,
                                                  bool& failed) {
  failed = false;
  if (o.health_port < 0) return nullptr;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen_address(o, o.health_port), grpc::InsecureServerCredentials(),
                           &bound_port);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || bound_port == 0) {
    std::fprintf(stderr, "ukes-server: cannot listen on %s (--health-port)\n",
                 listen_address(o, o.health_port).c_str());
    failed = true;
    return nullptr;
  }
  server->GetHealthCheckService()->SetServingStatus("ukes.v1.UkesService", true);
  return server;
}

void log_listening(const ServerOptions& o, const ukes::server::JobManager& jobs, int port,
                   int health_port) {
  log_event(LogLevel::kInfo, "listening",
            {{"address", o.listen},
             {"port", port},
             {"health_port", health_port},
             {"version", ukes::version()},
             {"data_dir", jobs.data_dir()},
             {"threads_per_job", jobs.threads_per_job()},
             {"max_concurrent_jobs", o.max_concurrent_jobs},
             {"memory_budget_bytes", o.memory_budget_bytes},
             {"tls", !o.tls_cert.empty()},
             {"client_certificates", !o.tls_client_ca.empty()},
             {"tokens", !o.token_file.empty()}});
}

// Serves until SIGINT or SIGTERM, then stops: streams get a moment to finish.
void serve_until_stopped(grpc::Server& server, grpc::Server* health, ukes::server::JobManager& jobs,
                         const sigset_t& stop_signals) {
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    log_event(LogLevel::kInfo, "stopping", {{"signal", sig == SIGINT ? "SIGINT" : "SIGTERM"}});
    server.GetHealthCheckService()->Shutdown();
    if (health) health->GetHealthCheckService()->Shutdown();
    // Memory-only jobs end cancelled (their streams see the JobEnd); durable ones stop without
    // ending, for the next server on the data directory to run again.
    jobs.shutdown();
    server.Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    if (health) health->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  });
  server.Wait();
  waiter.join();
}

}  // namespace

int main(int argc, char** argv) {
  ServerOptions o;
  if (const std::optional<int> exit_status = parse_command_line(argc, argv, o)) return *exit_status;
  if (!log_backend(o)) return 2;
  google::protobuf::SetLogHandler(&log_protobuf);
  const sigset_t stop_signals = block_stop_signals();
  const std::optional<Security> security = build_security(o);
  if (!security) return 2;
  const std::unique_ptr<ukes::server::JobManager> jobs = open_jobs(o);
  if (!jobs) return 1;
  ukes::server::UkesService service(*jobs, *security->auth);
  int bound_port = 0;
  const std::unique_ptr<grpc::Server> server =
      start_server(o, service, security->credentials, bound_port);
  if (!server) return 1;
  int health_port = -1;
  bool health_failed = false;
  const std::unique_ptr<grpc::Server> health = start_health_server(o, health_port, health_failed);
  if (health_failed) {
    server->Shutdown();
    return 1;
  }
  log_listening(o, *jobs, bound_port, health_port);
  serve_until_stopped(*server, health.get(), *jobs, stop_signals);
  log_event(LogLevel::kInfo, "stopped");
  return 0;
}
