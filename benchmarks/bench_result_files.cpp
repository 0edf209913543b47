// Result files of a large ensemble: the streaming results.json writer against the writer it
// replaced (peers/nlohmann_results_json.hpp, measured in the same run), and the binary results.h5.
// The systems are SCARA robots of the Monte Carlo example (client/examples/scara_montecarlo.json:
// random payload, perturbed initial angles), integrated with RK4 for 2 s in 20 steps: long enough
// for the Baumgarte transient (time constant 1/15 s) to settle every robot on its helix, as in a
// full-length run, so the values vary as much as a real run's; the files' sizes and write times
// depend on that variety, not on the number of steps.
//
//   bench_result_files [--systems N] [--dir DIR]   (default 10^5 systems, the system temp folder)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "benchmarks/peers/nlohmann_results_json.hpp"
#include "service/engine/engine.hpp"
#include "service/results/results_h5.hpp"
#include "service/results/results_json.hpp"
#include "service/runspec/spec_text.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

ukes::RunSpec scara_spec(int systems) {
  const std::string text = R"({"model": "scara",
    "sweep": {"count": )" + std::to_string(systems) +
                           R"(, "seed": 2024, "sampler": "lhs",
      "vary": {"params.m4": {"uniform": [0.3, 0.8]},
               "q0[0]": {"normal": [0.5235987755982988, 0.01]},
               "q0[1]": {"normal": [0.9599310885968813, 0.01]},
               "q0[2]": {"normal": [0.4188790204786391, 0.01]}}},
    "assemble": true,
    "integrator": {"method": "rk4", "t_end": 2.0, "dt": 0.1}})";
  ukes::ParseOptions options;
  options.limits.max_systems = systems;
  return ukes::parse_run_spec(ukes::parse_spec_text(text), options);
}

void report(const char* what, double seconds, const fs::path& file, int systems) {
  const auto bytes = static_cast<double>(fs::file_size(file));
  std::printf("%-28s %8.3f s %10.1f MB %8.1f B/system\n", what, seconds, bytes / 1e6,
              bytes / systems);
}

}  // namespace

int main(int argc, char** argv) {
  int systems = 100000;
  fs::path dir = fs::temp_directory_path();
  for (int k = 1; k + 1 < argc; k += 2) {
    const std::string flag = argv[k];
    if (flag == "--systems") systems = std::atoi(argv[k + 1]);
    if (flag == "--dir") dir = argv[k + 1];
  }
  const ukes::RunSpec spec = scara_spec(systems);
  auto start = Clock::now();
  const ukes::RunOutcome out = ukes::execute(spec);
  std::printf("%d scara systems integrated in %.2f s (%s)\n", systems, seconds_since(start),
              out.backend.c_str());

  const fs::path peer_path = dir / "bench_peer_systems.json";
  start = Clock::now();
  {
    std::ofstream os(peer_path, std::ios::binary);
    ukes::peers::nlohmann_systems(os, spec, out);
  }
  const double peer_s = seconds_since(start);
  report("json, previous writer (peer)", peer_s, peer_path, systems);

  // The writer itself, to a stream as the peer writes; then as `ukes run` writes a file (staged,
  // synced to the disk, renamed).
  const fs::path json_path = dir / "bench_results.json";
  start = Clock::now();
  {
    std::ofstream os(json_path, std::ios::binary);
    ukes::write_results_json(os, spec, out);
  }
  const double json_s = seconds_since(start);
  report("json, streaming writer", json_s, json_path, systems);
  start = Clock::now();
  ukes::stage_results_json(json_path.string(), spec, out).commit();
  report("json, the file, synced", seconds_since(start), json_path, systems);

  const fs::path h5_path = dir / "bench_results.h5";
  start = Clock::now();
  ukes::stage_results_h5(h5_path.string(), spec, out).commit();
  const double h5_s = seconds_since(start);
  report("hdf5 (shuffle + deflate)", h5_s, h5_path, systems);
  std::printf("json writer speed-up over the peer: %.2fx (the peer writes the systems only)\n",
              peer_s / json_s);
  for (const fs::path& p : {peer_path, json_path, h5_path}) fs::remove(p);
  return 0;
}
