// Configuration of ukes-server (set from its command-line flags).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "service/runspec/model_source.hpp"
#include "service/runspec/run_spec.hpp"

namespace ukes::server {

struct ServerOptions {
  std::string listen = "127.0.0.1";  // loopback unless told otherwise
  int port = 50051;                  // 0: any free port (see port_file)
  std::string port_file;             // written with the bound port once the server listens
  // > 0 (or 0: any free port): a second, plaintext port on `listen` that serves grpc.health.v1
  // alone, for probes that speak no TLS (Kubernetes' grpc probe); -1: none.
  int health_port = -1;
  // Durable jobs: the job store's directory (service/server/job_store.hpp). Empty: jobs live in
  // memory, results beyond the memory budget spill to a private temporary directory.
  std::string data_dir;
  // A job store that cannot be used as it is (JobStore) is moved aside, and the server starts
  // with an empty one, instead of refusing to start.
  bool set_aside_damaged_store = false;
  // Each principal's quota of registered models (RegisterModel).
  ModelRegistry::Limits model_limits;
  std::int64_t memory_budget_bytes = std::int64_t{1} << 30;  // results held in memory, all jobs
  SpecLimits limits;
  std::int64_t max_request_bytes = std::int64_t{256} << 20;
  int max_concurrent_jobs = 2;
  int max_queued_jobs = 64;
  // Result streams open at once: each holds up to one chunk (at most about 1 MiB) while a client
  // reads it, outside the memory budget.
  int max_streams = 64;
  int threads = 0;  // CPU threads per running job; <= 0: one per hardware thread
  // auto: the GPU when one is usable, else the CPU; cpu: always the CPU; gpu: the GPU or refuse
  // to start.
  Device device = Device::kAuto;
  std::vector<int> devices;      // the GPUs jobs may use (module ordinals); empty: every one
  double result_ttl_s = 3600.0;  // finished jobs are dropped this long after they end ...
  double fetched_ttl_s = 300.0;  // ... or this long after a client received the last chunk
  double chunk_target_s = 0.25;  // engine work between progress reports, in seconds
  // Transport security and authentication (service/server/transport_security.hpp, auth.hpp).
  std::string tls_cert, tls_key;  // PEM files: the server's certificate chain and its key
  std::string tls_client_ca;      // PEM: require client certificates this CA signed (mutual TLS)
  std::string token_file;         // `NAME TOKEN` lines: bearer tokens and their principals
  bool insecure = false;          // listen beyond loopback without TLS and authentication
};

}  // namespace ukes::server
