// End-to-end cost of the service: a 100,000-system duffing run through a real ukes-server on
// loopback against the same run in-process (ratio of wall times), and the streaming throughput of
// trajectory data over loopback (MB/s of protocol payload, raw and decoded by the client).
//
//   build/benchmarks/bench_service [--systems N] [--repetitions R] [--model duffing|scara]
//                                  [--device cpu|gpu] [--t-end SECONDS] [--threads T]  (dt = 1 ms)
//                                  [--memory-only]
//
// Prints a Markdown table: wall times, and the CPU seconds each path used (what the server's own
// work costs where every core integrates). The server runs with the same CPU thread count as the
// in-process run: T, by default every core (fewer leave the server's own threads a core). The
// server keeps its jobs in a job store (--data-dir), as a deployed one does; `--memory-only`
// starts it without one, which shows what storing the results costs.
// `--device gpu` runs both on the GPU module (UKES_CUDA_MODULE=build/libukes_host_gpu.so: the
// host emulation, which shows what the slice pipeline hides but not a GPU's speed).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/backend/cpu/cpu_backend.hpp"
#include "kernels/backend/gpu/gpu_backend.hpp"
#include "service/engine/engine.hpp"
#include "service/protocol/result_assembler.hpp"
#include "service/runspec/run_spec.hpp"
#include "service/runspec/spec_text.hpp"
#include "tests/support/server_process.hpp"
#include "ukes/v1/ukes.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// CPU seconds (user and system) this process has used, all its threads.
double own_cpu_s() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return double(t.tv_sec) + 1e-6 * double(t.tv_usec); };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// CPU seconds another process has used, all its threads (/proc/PID/stat's utime and stime, in
// clock ticks: 10 ms on Linux, fine for runs of seconds, coarse for runs of a tenth of one).
double process_cpu_s(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  // The fields after the command's name, which ends with the last ')': state is field 3, utime 14.
  std::istringstream rest(text.substr(text.rfind(')') + 2));
  std::vector<std::string> fields((std::istream_iterator<std::string>(rest)),
                                  std::istream_iterator<std::string>());
  if (fields.size() < 13) return 0.0;
  return (std::stod(fields[11]) + std::stod(fields[12])) / double(sysconf(_SC_CLK_TCK));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The compared sweep: duffing (RK4, 200 steps) or the README's SCARA robots (RK4, 2000 steps, as
// the GPU measurements of issue 28), on the device asked for.
std::string sweep_spec(const std::string& model, int systems, const std::string& device,
                       const std::string& t_end) {
  const std::string head = R"({"device": ")" + device + R"(", "sweep": {"count": )" +
                           std::to_string(systems) + R"(, "seed": 7, "vary": )";
  if (model == "scara")
    return head + R"({"params.m4": {"uniform": [0.3, 0.7]}, "q0[0]": {"normal": [0.0, 0.01]}}},
      "model": "scara", "integrator": {"method": "rk4", "t_end": )" +
           t_end + R"(, "dt": 0.001}})";
  return head + R"({"params.m1": {"uniform": [1.5, 2.5]}, "q0[0]": {"normal": [1.0, 0.01]}}},
    "model": "duffing", "integrator": {"method": "rk4", "t_end": )" +
         t_end + R"(, "dt": 0.001}})";
}

std::string trajectory_spec() {
  return R"({"model": "duffing",
    "sweep": {"count": 2000, "seed": 3, "vary": {"params.m1": {"uniform": [1.5, 2.5]}}},
    "integrator": {"method": "rk4", "t_end": 2.0, "dt": 0.001},
    "output": {"samples": 2001, "trajectories": "all"}})";
}

struct StreamStats {
  double seconds = 0;
  double bytes = 0;
  ukes::v1::JobState state = ukes::v1::JOB_STATE_UNSPECIFIED;
  std::string job_id;
};

// Reads a stream to its end; `assemble` also decodes every chunk into result arrays.
template <class Reader>
StreamStats drain(Reader& reader, bool assemble, Clock::time_point t0) {
  StreamStats s;
  ukes::ResultAssembler assembler;
  ukes::v1::StreamJobResultsResponse chunk;
  while (reader->Read(&chunk)) {
    s.bytes += static_cast<double>(chunk.ByteSizeLong());
    if (chunk.has_header()) s.job_id = chunk.header().job_id();
    if (chunk.has_end()) s.state = chunk.end().state();
    if (assemble) assembler.add(chunk);
  }
  s.seconds = seconds_since(t0);
  const grpc::Status status = reader->Finish();
  if (!status.ok()) {
    std::fprintf(stderr, "stream failed: %s\n", status.error_message().c_str());
    std::exit(1);
  }
  return s;
}

StreamStats simulate(ukes::v1::UkesService::Stub& stub, const std::string& spec, bool assemble) {
  ukes::v1::SimulateRequest request;
  request.mutable_job()->set_spec_json(spec);
  grpc::ClientContext context;
  const auto t0 = Clock::now();
  auto reader = stub.Simulate(&context, request);
  return drain(reader, assemble, t0);
}

StreamStats replay(ukes::v1::UkesService::Stub& stub, const std::string& job_id, bool assemble) {
  ukes::v1::StreamJobResultsRequest request;
  request.set_job_id(job_id);
  grpc::ClientContext context;
  const auto t0 = Clock::now();
  auto reader = stub.StreamJobResults(&context, request);
  return drain(reader, assemble, t0);
}

}  // namespace

int main(int argc, char** argv) {
  int systems = 100000, repetitions = 3, threads = ukes::default_cpu_threads();
  std::string model = "duffing", device = "cpu", t_end;
  auto data_dir = ukes::testing::DataDir::kGiven;
  for (int k = 1; k < argc; ++k) {
    const std::string flag = argv[k];
    if (flag == "--memory-only") {
      data_dir = ukes::testing::DataDir::kPrivate;
      continue;
    }
    if (k + 1 == argc) {
      std::fprintf(stderr, "bench_service: %.40s needs a value\n", flag.c_str());
      return 2;
    }
    const char* value = argv[++k];
    if (flag == "--systems") {
      systems = std::max(1, std::atoi(value));
    } else if (flag == "--repetitions") {
      repetitions = std::max(1, std::atoi(value));
    } else if (flag == "--model") {
      model = value;
    } else if (flag == "--device") {
      device = value;
    } else if (flag == "--t-end") {
      t_end = value;
    } else if (flag == "--threads") {
      threads = std::max(1, std::atoi(value));
    } else {
      std::fprintf(stderr, "bench_service: unknown option %.40s (see the header of %s)\n",
                   flag.c_str(), __FILE__);
      return 2;
    }
  }
  if (t_end.empty()) t_end = model == "scara" ? "2.0" : "0.2";
  ukes::testing::ServerProcess server({"--threads", std::to_string(threads), "--device", device},
                                      data_dir);
  auto stub = ukes::v1::UkesService::NewStub(server.channel());

  ukes::ParseOptions parse;  // as `ukes run` parses: this machine's GPU, if asked for
  if (device != "cpu") {
    const ukes::GpuAvailability gpu = ukes::gpu_availability();
    parse.gpu_available = gpu.available;
    parse.gpu_devices = gpu.info.device_count;
    parse.gpu_unavailable_reason = gpu.reason;
  }
  // 1. The same sweep in-process and through the server.
  const std::string spec_text = sweep_spec(model, systems, device, t_end);
  const long steps = std::lround(std::stod(t_end) / 0.001);
  std::vector<double> in_process, via_server, integration, statistics;
  std::vector<double> cpu_in_process, cpu_server, cpu_client;  // CPU seconds of each run
  for (int r = 0; r < repetitions; ++r) {
    const double own_before = own_cpu_s();
    const auto t0 = Clock::now();
    const ukes::RunSpec spec = ukes::parse_run_spec(ukes::parse_spec_text(spec_text), parse);
    const ukes::RunOutcome out = ukes::execute(spec, {.threads = threads});
    in_process.push_back(seconds_since(t0));
    cpu_in_process.push_back(own_cpu_s() - own_before);
    integration.push_back(out.elapsed_s);
    statistics.push_back(out.total_s - out.elapsed_s);
    if (out.backend != device) {
      std::fprintf(stderr, "ran on the %s, not the %s\n", out.backend.c_str(), device.c_str());
      return 1;
    }
    const double client_before = own_cpu_s(), server_before = process_cpu_s(server.pid());
    const StreamStats s = simulate(*stub, spec_text, /*assemble=*/true);
    if (s.state != ukes::v1::JOB_STATE_SUCCEEDED) return 1;
    via_server.push_back(s.seconds);
    cpu_client.push_back(own_cpu_s() - client_before);
    cpu_server.push_back(process_cpu_s(server.pid()) - server_before);
    if (out.statistics.ok != systems) return 1;
  }

  // 2. Trajectory streaming: the job runs once, then its finished log is replayed.
  const StreamStats live = simulate(*stub, trajectory_spec(), /*assemble=*/false);
  std::vector<double> raw, decoded;
  double bytes = 0;
  for (int r = 0; r < repetitions; ++r) {
    const StreamStats a = replay(*stub, live.job_id, false);
    const StreamStats b = replay(*stub, live.job_id, true);
    raw.push_back(a.bytes / a.seconds / 1e6);
    decoded.push_back(b.bytes / b.seconds / 1e6);
    bytes = a.bytes;
  }

  const double t_in = median(in_process), t_srv = median(via_server);
  std::printf("| measurement | value |\n| --- | --- |\n");
  std::printf(
      "| %s, %d systems, RK4 %ld steps, %s, in-process (parse + run + statistics) | %.3f s |\n",
      model.c_str(), systems, steps, device.c_str(), t_in);
  std::printf("| of which the slices (inputs, integration, copies) | %.3f s |\n",
              median(integration));
  std::printf("| of which ensemble statistics | %.3f s |\n", median(statistics));
  std::printf(
      "| same through ukes-server on loopback (submit to last chunk, client decodes) | %.3f s |\n",
      t_srv);
  std::printf("| ratio server / in-process | %.3f |\n", t_srv / t_in);
  const double c_in = median(cpu_in_process), c_srv = median(cpu_server), c_cl = median(cpu_client);
  std::printf("| CPU seconds in-process | %.3f s |\n", c_in);
  std::printf("| CPU seconds through the server: the server's + the client's | %.3f + %.3f s |\n",
              c_srv, c_cl);
  std::printf("| ratio of CPU seconds, server and client / in-process | %.3f |\n",
              (c_srv + c_cl) / c_in);
  std::printf("| trajectory job: 2000 systems x 2001 samples, all fields | %.1f MB of chunks |\n",
              bytes / 1e6);
  std::printf(
      "| trajectory stream over loopback, raw (live run: %.2f s incl. compute) | %.0f MB/s |\n",
      live.seconds, median(raw));
  std::printf("| trajectory stream over loopback, decoded into result arrays | %.0f MB/s |\n",
              median(decoded));
  std::printf("\n%d CPU threads, median of %d repetitions.\n", threads, repetitions);
  return 0;
}
