// Ensemble driver for the peer comparison: runs one catalogue model (or a user model's definition
// file) at given batch sizes, method, precision and thread count on a backend and prints one JSON
// line per batch size with the wall time and system-steps/s; on the GPU also the chunks' kernel
// times added and, for a user model, which kernel ran (compiled for it, or the bucket's
// interpreter). With --dump-dir it also writes the initial conditions it integrated and the final
// states it reached as .npy files, so that every peer integrates exactly the same systems and is
// checked against our final states before its time counts.
//
//   ensemble_driver --list
//   ensemble_driver --model scara --n 100,1000 --method rk4 --steps 200 --dt 1e-3 --threads 2
//   ensemble_driver --definition client/examples/models/scara.json --n 65536 --device gpu
//
// Initial conditions (one rule, here, for every implementation): system i starts from the model's
// default state perturbed by eps_i = 1e-3 * frac(i * golden ratio) (see perturbed_batch).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/peers/npy.hpp"
#include "kernels/backend/backend.hpp"
#include "kernels/backend/gpu/gpu_backend.hpp"
#include "kernels/ensemble/ensemble.hpp"
#include "kernels/models/user/compiled_model.hpp"
#include "kernels/uk/servo_control.hpp"

namespace {

using json = nlohmann::json;

// In [0, 1e-3): distinct for every system, independent of the batch size, so that a subset of
// systems 0..K-1 is the same in every batch.
double perturbation(int i) {
  const double golden = 0.6180339887498949;
  const double x = static_cast<double>(i) * golden;
  return 1e-3 * (x - std::floor(x));
}

// The model's default state, perturbed per system. Velocities are scaled by (1 + eps_i), which
// keeps scleronomic velocity rows satisfied (A qd = 0 is linear in qd: four_bar stays on its
// constraint set); duffing's rheonomic row fixes x1d - x2d, so both velocities shift by eps_i
// instead; a model at rest (swarm) moves its first coordinate by eps_i. scara starts off its
// constraint set by design (Baumgarte gains pull it back), perturbed or not.
ukes::Batch perturbed_batch(const ukes::ModelInfo& info, int count) {
  ukes::Batch b = ukes::Batch::defaults(info, count);
  const bool at_rest =
      std::all_of(info.qd0.begin(), info.qd0.end(), [](double v) { return v == 0.0; });
  for (int i = 0; i < count; ++i) {
    const double eps = perturbation(i);
    if (info.name == "duffing") {
      for (int j = 0; j < info.n; ++j) b.qd(j, i) += eps;
    } else if (!at_rest) {
      for (int j = 0; j < info.n; ++j) b.qd(j, i) *= 1.0 + eps;
    } else {
      b.q(0, i) += eps;
    }
  }
  return b;
}

// Component-major (SoA, [k * count + i]) to system-major rows [i][k], numpy's natural layout.
ukes::bench::NpyMatrix system_major(const std::vector<double>& soa, int count, int n) {
  ukes::bench::NpyMatrix m;
  m.rows = count;
  m.cols = n;
  m.data.resize(static_cast<std::size_t>(count) * static_cast<std::size_t>(n));
  for (int i = 0; i < count; ++i)
    for (int k = 0; k < n; ++k)
      m.data[static_cast<std::size_t>(i) * n + k] = soa[static_cast<std::size_t>(k) * count + i];
  return m;
}

json backends_json() {
  json cpu = {{"available", true}, {"threads", std::thread::hardware_concurrency()}};
  const ukes::GpuAvailability g = ukes::gpu_availability();
  json gpu = {{"available", g.available}};
  if (g.available) {
    gpu["name"] = g.info.name;
    gpu["multiprocessors"] = g.info.multiprocessors;
    gpu["memory_bytes"] = g.info.total_memory;
    gpu["driver_version"] = g.info.driver_version;
  } else {
    gpu["reason"] = g.reason;
  }
  return {{"cpu", cpu}, {"gpu", gpu}};
}

struct Options {
  std::string model;
  std::string definition;  // a user model's definition file, instead of --model
  std::vector<int> counts;
  std::string method = "rk4";
  std::string precision = "fp64";
  std::string device = "cpu";
  std::string gpu_path = "auto";
  int threads = 0;
  int steps = 200;
  double dt = 1e-3;
  double t_end = 0.0;  // dopri5: end time (0: steps * dt)
  double rtol = 1e-8;
  double atol = 1e-8;
  int repetitions = 3;
  int warmup = -1;  // -1: one untimed run on the GPU (module load, context), none on the CPU
  std::string dump_dir;
  // Every row a servo row, full actuation, the controller's model exact (docs/CONTROL.md): the
  // cost of control against the same run without it.
  bool control = false;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t k = v.size() / 2;
  return v.size() % 2 == 1 ? v[k] : 0.5 * (v[k - 1] + v[k]);
}

// One batch size: repetitions of the same run, the last one's states dumped.
json run_one(const ukes::ModelInfo& info, int count, const Options& o, ukes::Device device) {
  ukes::Batch batch = perturbed_batch(info, count);
  ukes::EnsembleSettings s = ukes::EnsembleSettings::for_model(info);
  if (o.control) {
    if (info.rows() == 0) throw std::runtime_error(info.name + " has no rows to servo");
    s.control.active = true;
    s.control.servo_rows = ukes::all_rows_mask(info.rows());
    batch.control_params = batch.params;
  }
  s.t0 = 0.0;
  s.samples = 2;
  s.threads = o.threads;
  s.precision = o.precision == "fp32" ? ukes::Precision::kFp32 : ukes::Precision::kFp64;
  s.gpu_path = o.gpu_path == "fused"      ? ukes::GpuPath::kFused
               : o.gpu_path == "warp"     ? ukes::GpuPath::kWarp
               : o.gpu_path == "cusolver" ? ukes::GpuPath::kCusolver
                                          : ukes::GpuPath::kAuto;
  if (o.method == "rk4") {
    s.method = ukes::Method::kRk4;
    s.dt = o.dt;
    s.t_end = o.dt * o.steps;
  } else {
    s.method = ukes::Method::kDopri5;
    s.t_end = o.t_end > 0.0 ? o.t_end : o.dt * o.steps;
    s.rtol = o.rtol;
    s.atol = o.atol;
  }
  const int warmup = o.warmup >= 0 ? o.warmup : (device == ukes::Device::kGpu ? 1 : 0);
  ukes::BatchResults r;
  ukes::GpuRunReport report;  // the last GPU run's
  const auto run = [&] {
    if (device == ukes::Device::kGpu)
      report = ukes::run_ensemble_gpu(batch, s, r);
    else
      ukes::run_ensemble_cpu(batch, s, r);
  };
  for (int w = 0; w < warmup; ++w) run();
  std::vector<double> walls;
  for (int rep = 0; rep < std::max(1, o.repetitions); ++rep) {
    const auto start = std::chrono::steady_clock::now();
    run();
    walls.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const std::int64_t system_steps =
      std::accumulate(r.steps.begin(), r.steps.end(), std::int64_t{0});
  const auto ok = std::count(r.status.begin(), r.status.end(), 0);
  const double wall = median(walls);
  json line = {
      {"impl", "ukes"},
      {"backend", ukes::device_name(device)},
      {"model", info.name},
      {"n_systems", count},
      {"method", o.method},
      {"precision", o.precision},
      {"control", o.control},
      {"threads",
       device == ukes::Device::kCpu
           ? (o.threads > 0 ? o.threads : static_cast<int>(std::thread::hardware_concurrency()))
           : 0},
      {"t_end", s.t_end},
      {"system_steps", system_steps},
      {"steps_per_system", static_cast<double>(system_steps) / count},
      {"wall_s", wall},
      {"wall_s_all", walls},
      {"systems_per_s", count / wall},
      {"system_steps_per_s", static_cast<double>(system_steps) / wall},
      {"status_ok", ok}};
  if (device == ukes::Device::kGpu) {
    line["kernel_s_sum"] = report.kernel_s;
    if (!report.kernel.empty()) line["gpu_kernel"] = report.kernel;
  }
  if (o.method == "dopri5") {
    line["rtol"] = o.rtol;
    line["atol"] = o.atol;
  } else {
    line["dt"] = o.dt;
  }
  if (!o.dump_dir.empty()) {
    namespace fs = std::filesystem;
    fs::create_directories(o.dump_dir);
    const std::string stem = info.name + "_" + std::to_string(count);
    const fs::path dir(o.dump_dir);
    ukes::bench::write_npy((dir / ("ic_" + stem + "_q0.npy")).string(),
                           system_major(batch.q0, count, info.n));
    ukes::bench::write_npy((dir / ("ic_" + stem + "_qd0.npy")).string(),
                           system_major(batch.qd0, count, info.n));
    const std::string tag = std::string("ukes-") + ukes::device_name(device) + "-" + o.method;
    const fs::path q_path = dir / ("final_" + tag + "_" + stem + "_q.npy");
    ukes::bench::write_npy(q_path.string(), system_major(r.q, count, info.n));
    line["final_q"] = q_path.string();
  }
  return line;
}

std::shared_ptr<const ukes::ModelInfo> read_definition(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open the file");
  std::stringstream text;
  text << in.rdbuf();
  return ukes::make_user_model_info(ukes::parse_user_model_text(text.str()));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ukes ensemble driver: system-steps/s of one model on one backend (JSON lines)"};
  Options o;
  bool list = false;
  app.add_flag("--list", list, "print the available backends and models as JSON, then exit");
  app.add_option("--model", o.model, "catalogue model");
  app.add_option("--definition", o.definition, "a user model's definition file (JSON)");
  app.add_option("--n", o.counts, "batch sizes (comma separated)")->delimiter(',');
  app.add_option("--method", o.method)->check(CLI::IsMember({"rk4", "dopri5"}));
  app.add_option("--precision", o.precision)->check(CLI::IsMember({"fp64", "fp32"}));
  app.add_option("--device", o.device)->check(CLI::IsMember({"cpu", "gpu"}));
  app.add_option("--gpu-path", o.gpu_path)
      ->check(CLI::IsMember({"auto", "fused", "warp", "cusolver"}));
  app.add_option("--threads", o.threads, "CPU threads (0: all hardware threads)");
  app.add_option("--steps", o.steps, "rk4: steps of dt per system");
  app.add_option("--dt", o.dt, "rk4 step");
  app.add_option("--t-end", o.t_end, "dopri5 end time (default steps * dt)");
  app.add_option("--rtol", o.rtol);
  app.add_option("--atol", o.atol);
  app.add_option("--repetitions", o.repetitions, "timed runs; the median is reported");
  app.add_option("--warmup", o.warmup, "untimed runs first (default: 1 on the GPU, 0 on the CPU)");
  app.add_flag("--control", o.control,
               "every row a servo row, the controller's model exact (docs/CONTROL.md)");
  app.add_option("--dump-dir", o.dump_dir, "write ic_*.npy and final_*.npy here");
  CLI11_PARSE(app, argc, argv);

  if (list) {
    json models = json::array();
    for (const ukes::ModelInfo& m : ukes::catalogue_info()) models.push_back(m.name);
    std::cout << json{{"backends", backends_json()}, {"models", models}}.dump() << std::endl;
    return 0;
  }
  std::shared_ptr<const ukes::ModelInfo> user_model;
  try {
    user_model = o.definition.empty() ? nullptr : read_definition(o.definition);
  } catch (const std::exception& e) {
    std::cerr << "ensemble_driver: " << o.definition << ": " << e.what() << "\n";
    return 2;
  }
  const ukes::ModelInfo* info = user_model ? user_model.get() : ukes::find_model(o.model);
  if (info == nullptr || o.counts.empty()) {
    std::cerr << "ensemble_driver: need --model (a catalogue name) or --definition, and --n\n";
    return 2;
  }
  const ukes::Device device = o.device == "gpu" ? ukes::Device::kGpu : ukes::Device::kCpu;
  if (device == ukes::Device::kGpu && !ukes::gpu_availability().available) {
    // Not an error: the comparison lists the backend as unavailable, with the reason.
    std::cout << json{{"impl", "ukes"},
                      {"backend", "gpu"},
                      {"model", info->name},
                      {"unavailable", ukes::gpu_availability().reason}}
                     .dump()
              << std::endl;
    return 0;
  }
  try {
    for (int count : o.counts) std::cout << run_one(*info, count, o, device).dump() << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "ensemble_driver: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
