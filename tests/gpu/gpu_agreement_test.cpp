// The GPU backend against the CPU backend, for every catalogue model, all three GPU paths (one
// thread per system, one warp per system, cuSOLVER), both precisions, RK4 and DOPRI5: same
// statuses, and final states and residual maxima that agree to rounding (RK4 FP64: 1e-12
// relative; FP32: 1e-4, or four times the FP32 CPU run's own error against FP64 where that is
// larger) or within the integration tolerances (DOPRI5, where the step-size sequences may part
// at a rounding-level difference). Needs a GPU: without one every
// test here is skipped, saying why. CI runs them all on the host emulation of the GPU module
// (libukes_host_gpu.so, ctest's HostGpu: tests), whose warp path is a 32-thread team per system
// and therefore gets tiny batches there.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "kernels/backend/gpu/gpu_backend.hpp"
#include "kernels/ensemble/statistics.hpp"
#include "kernels/models/model_info.hpp"
#include "kernels/models/user/compiled_model.hpp"
#include "kernels/sweep/sweep.hpp"
#include "kernels/uk/servo_control.hpp"
#include "service/runspec/model_source.hpp"
#include "service/runspec/run_spec.hpp"
#include "tests/support/example_models.hpp"
#include "tests/support/gpu_support.hpp"
#include "tests/support/identical_results.hpp"

namespace ukes {
namespace {

// `count` systems around the model's defaults: parameters within +-4%, first coordinate nudged,
// then assembled onto the constraint set, so no two systems are alike.
Batch varied_batch(const ModelInfo& m, int count) {
  Batch b = Batch::defaults(m, count);
  for (int i = 0; i < count; ++i) {
    const double u = (i % 17) / 16.0 - 0.5;  // in [-0.5, 0.5]
    for (std::size_t k = 0; k < m.params.size(); ++k)
      if (!m.params[k].structural) b.param(static_cast<int>(k), i) *= 1.0 + 0.08 * u;
    b.q(0, i) += 1e-3 * u;
  }
  return b;
}

EnsembleSettings settings_for(const ModelInfo& m, Method method, Precision precision) {
  EnsembleSettings s = EnsembleSettings::for_model(m);
  s.method = method;
  s.precision = precision;
  s.assemble = true;
  s.samples = 5;
  if (method == Method::kRk4) {
    s.dt = m.t_end / 1000.0;
    s.t_end = s.t0 + 200 * s.dt;
  } else {
    s.t_end = 0.2 * m.t_end;
    s.rtol = s.atol = precision == Precision::kFp64 ? 1e-9 : 1e-5;
  }
  return s;
}

// Relative agreement allowed on final states and residual maxima.
double tolerance(Method method, Precision precision) {
  if (method == Method::kRk4) return precision == Precision::kFp64 ? 1e-12 : 1e-4;
  return precision == Precision::kFp64 ? 1e-6 : 1e-2;
}

bool close(double gpu, double cpu, double tol, double scale) {
  if (std::isnan(gpu) || std::isnan(cpu)) return std::isnan(gpu) && std::isnan(cpu);
  return std::abs(gpu - cpu) <= tol * std::max({std::abs(cpu), std::abs(gpu), scale});
}

// The largest relative error of an FP32 CPU run's final states against the same run in FP64.
// Over a few hundred steps of a stiff or ill-conditioned model (four_bar's B = A M^-1/2) FP32
// rounding alone grows past 1e-4; a GPU's FP32 run must then be within a few times the CPU's own
// FP32 error of the FP32 CPU, not within a fixed figure.
double fp32_error(const Batch& batch, EnsembleSettings s, const BatchResults& fp32) {
  s.precision = Precision::kFp64;
  BatchResults fp64;
  run_ensemble_cpu(batch, s, fp64);
  double worst = 0.0;
  for (int i = 0; i < fp32.count; ++i) {
    if (fp32.status[i] != 0 || fp64.status[i] != 0) continue;
    for (int j = 0; j < fp32.n; ++j) {
      const double scale = std::max(1.0, std::abs(fp64.q_at(j, i)));
      worst = std::max(worst, std::abs(fp32.q_at(j, i) - fp64.q_at(j, i)) / scale);
      const double rate_scale = std::max(1.0, std::abs(fp64.qd_at(j, i)));
      worst = std::max(worst, std::abs(fp32.qd_at(j, i) - fp64.qd_at(j, i)) / rate_scale);
    }
  }
  return worst;
}

using Case = std::tuple<std::string, GpuPath, Precision, Method>;

class GpuAgreement : public ::testing::TestWithParam<Case> {};

TEST_P(GpuAgreement, FinalStatesAndResidualsMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const auto& [name, path, precision, method] = GetParam();
  const ModelInfo& m = *find_model(name);
  // On the emulation every collective of the warp path is a 32-thread barrier: two systems over
  // a twentieth of the span still run every part of its loop.
  const bool tiny = testing::emulated_gpu() && path == GpuPath::kWarp;
  const int count = tiny ? 2 : 1000;
  const Batch batch = varied_batch(m, count);
  EnsembleSettings s = settings_for(m, method, precision);
  s.gpu_path = path;
  if (tiny) s.t_end = s.t0 + (s.t_end - s.t0) / 20;
  const std::vector<std::int32_t> recorded =
      tiny ? std::vector<std::int32_t>{1, 0} : std::vector<std::int32_t>{0, 7, count - 1};
  BatchResults cpu, gpu;
  run_ensemble_cpu(batch, s, cpu, recorded);
  const GpuRunReport report = run_ensemble_gpu(batch, s, gpu, recorded, true);
  EXPECT_EQ(report.path, path);

  double tol = tolerance(method, precision);
  if (precision == Precision::kFp32) tol = std::max(tol, 4 * fp32_error(batch, s, cpu));
  int ok = 0;
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ(gpu.status[i], cpu.status[i]) << "system " << i;
    if (cpu.status[i] != 0) continue;
    ++ok;
    for (int j = 0; j < m.n; ++j) {
      EXPECT_PRED4(close, gpu.q_at(j, i), cpu.q_at(j, i), tol, 1.0) << "q" << j << " of " << i;
      EXPECT_PRED4(close, gpu.qd_at(j, i), cpu.qd_at(j, i), tol, 1.0) << "qd" << j << " of " << i;
    }
    // Residual maxima are rounding-level themselves: compare them at the scale of the state.
    for (int r = 0; r < m.residual_slots(); ++r)
      EXPECT_PRED4(close, gpu.residual_at(r, i), cpu.residual_at(r, i), tol, 1.0)
          << "residual slot " << r << " of " << i;
    if (method == Method::kRk4) {
      EXPECT_EQ(gpu.steps[i], cpu.steps[i]);
    }
  }
  EXPECT_GT(2 * ok, count) << "too few systems ended ok to compare";
  // Trajectories of the recorded systems, sample by sample.
  for (std::size_t slot = 0; slot < recorded.size(); ++slot)
    for (int k = 0; k < s.samples; ++k)
      for (int j = 0; j < m.n; ++j)
        EXPECT_PRED4(close, gpu.traj_q_at(static_cast<int>(slot), k, j),
                     cpu.traj_q_at(static_cast<int>(slot), k, j), tol, 1.0);
  // Statistics computed on the device equal those of the host over the GPU's own results.
  std::vector<std::int32_t> failed;
  for (int i = 0; i < count; ++i)
    if (gpu.status[i] != 0) failed.push_back(i);
  EXPECT_EQ(report.failed_ids, failed);
  const EnsembleStatistics host = ensemble_statistics(gpu);
  EXPECT_EQ(report.statistics.ok, host.ok);
  EXPECT_EQ(report.statistics.by_status, host.by_status);
  ASSERT_EQ(report.statistics.q.size(), host.q.size());
  for (std::size_t j = 0; j < host.q.size(); ++j) {
    EXPECT_EQ(report.statistics.q[j].p50, host.q[j].p50);
    EXPECT_EQ(report.statistics.q[j].max, host.q[j].max);
    EXPECT_NEAR(report.statistics.q[j].mean, host.q[j].mean,
                1e-13 * std::max(1.0, std::abs(host.q[j].mean)));
  }
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const ModelInfo& m : catalogue_info())
    for (GpuPath path : {GpuPath::kFused, GpuPath::kWarp, GpuPath::kCusolver})
      for (Precision p : {Precision::kFp64, Precision::kFp32})
        for (Method method : {Method::kRk4, Method::kDopri5})
          cases.emplace_back(m.name, path, p, method);
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const auto& [name, path, precision, method] = info.param;
  return name + "_" + gpu_path_name(path) + (precision == Precision::kFp64 ? "_fp64" : "_fp32") +
         (method == Method::kRk4 ? "_rk4" : "_dopri5");
}

INSTANTIATE_TEST_SUITE_P(Catalogue, GpuAgreement, ::testing::ValuesIn(all_cases()), case_name);

// The catalogue's definition files (client/examples/models/) on the GPU (the fused path, the one
// user models take) against the built-in models on the CPU: the user-model program, its padding to
// a bucket and the device copy of the program change nothing beyond rounding.
using UserCase = std::tuple<std::string, GpuPath, Method>;

class GpuUserModels : public ::testing::TestWithParam<UserCase> {};

TEST_P(GpuUserModels, DefinitionOnTheGpuMatchesTheBuiltInOnTheCpu) {
  SKIP_WITHOUT_GPU();
  const auto& [name, path, method] = GetParam();
  const ModelInfo& builtin = *find_model(name);
  const auto user = example_model(name);
  const int count = 1000;
  EnsembleSettings s = settings_for(builtin, method, Precision::kFp64);
  s.gpu_path = path;
  BatchResults cpu, gpu;
  run_ensemble_cpu(varied_batch(builtin, count), s, cpu);
  run_ensemble_gpu(varied_batch(*user, count), s, gpu, {}, false);
  const double tol = tolerance(method, Precision::kFp64);
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ(gpu.status[i], cpu.status[i]) << "system " << i;
    for (int j = 0; j < builtin.n; ++j)
      EXPECT_PRED4(close, gpu.q_at(j, i), cpu.q_at(j, i), tol, 1.0) << "q" << j << " of " << i;
    for (int r = 0; r < builtin.residual_slots(); ++r)
      EXPECT_PRED4(close, gpu.residual_at(r, i), cpu.residual_at(r, i), tol, 1.0)
          << "residual slot " << r << " of " << i;
  }
}

std::vector<UserCase> user_cases() {
  std::vector<UserCase> cases;
  for (const ModelInfo& m : catalogue_info())
    for (Method method : {Method::kRk4, Method::kDopri5})
      cases.emplace_back(m.name, GpuPath::kFused, method);  // user models' one GPU path
  return cases;
}

std::string user_case_name(const ::testing::TestParamInfo<UserCase>& info) {
  const auto& [name, path, method] = info.param;
  return name + "_" + gpu_path_name(path) + (method == Method::kRk4 ? "_rk4" : "_dopri5");
}

INSTANTIATE_TEST_SUITE_P(Definitions, GpuUserModels, ::testing::ValuesIn(user_cases()),
                         user_case_name);

// On a CUDA device a user model runs the fused kernel compiled for it with NVRTC
// (kernels/backend/cuda/compiled_kernels.cuh), not its bucket's interpreter; the report says
// which ran. The host emulation has no NVRTC and always interprets.
TEST(GpuUserModelKernel, ACudaDeviceRunsTheKernelCompiledForTheModel) {
  SKIP_WITHOUT_GPU();
  const auto user = example_model("scara");
  EnsembleSettings s = settings_for(*find_model("scara"), Method::kRk4, Precision::kFp64);
  s.gpu_path = GpuPath::kFused;
  BatchResults gpu;
  const GpuRunReport report = run_ensemble_gpu(varied_batch(*user, 100), s, gpu, {}, false);
  if (testing::emulated_gpu()) {
    EXPECT_TRUE(report.kernel.empty()) << report.kernel;
  } else {
    EXPECT_EQ(report.kernel.rfind("compiled for the model", 0), 0u) << report.kernel;
  }
  for (int i = 0; i < gpu.count; ++i) ASSERT_EQ(gpu.status[i], 0) << "system " << i;
}

// Runs that project after every step take the fused kernel that carries the projection (the others
// take one without it: kernels/backend/device/chunked_run.hpp), and match the CPU as closely.
using ProjectionCase = std::tuple<std::string, Method>;

class GpuProjection : public ::testing::TestWithParam<ProjectionCase> {};

TEST_P(GpuProjection, ProjectingRunsMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const auto& [name, method] = GetParam();
  const ModelInfo& m = *find_model(name);
  const int count = 200;
  // Not assembled, velocities nudged too: the initial states are off the constraints by about
  // 1e-3, so that the projection moves most systems beyond the agreement's tolerance (checked
  // below).
  Batch batch = varied_batch(m, count);
  for (int i = 0; i < count; ++i) batch.qd(0, i) += 1e-3 * ((i % 13) / 12.0 - 0.5);
  EnsembleSettings s = settings_for(m, method, Precision::kFp64);
  s.assemble = false;
  s.gpu_path = GpuPath::kFused;
  BatchResults plain, cpu, gpu;
  run_ensemble_cpu(batch, s, plain);
  s.projection = true;
  run_ensemble_cpu(batch, s, cpu);
  run_ensemble_gpu(batch, s, gpu, {}, false);
  const double tol = tolerance(method, Precision::kFp64);
  int projected = 0;  // systems whose projection moved them by more than the tolerance
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ(gpu.status[i], cpu.status[i]) << "system " << i;
    bool moved = false;
    for (int j = 0; j < m.n; ++j) {
      EXPECT_PRED4(close, gpu.q_at(j, i), cpu.q_at(j, i), tol, 1.0) << "q" << j << " of " << i;
      EXPECT_PRED4(close, gpu.qd_at(j, i), cpu.qd_at(j, i), tol, 1.0) << "qd" << j << " of " << i;
      moved = moved || !close(plain.q_at(j, i), cpu.q_at(j, i), tol, 1.0) ||
              !close(plain.qd_at(j, i), cpu.qd_at(j, i), tol, 1.0);
    }
    // A model whose rows fix every coordinate (scara) ends on the same state either way; its
    // residual maxima tell the runs apart.
    for (int r = 0; r < m.residual_slots(); ++r) {
      EXPECT_PRED4(close, gpu.residual_at(r, i), cpu.residual_at(r, i), tol, 1.0)
          << "residual slot " << r << " of " << i;
      moved = moved || !close(plain.residual_at(r, i), cpu.residual_at(r, i), tol, 1.0);
    }
    projected += moved ? 1 : 0;
  }
  // Otherwise a kernel that skipped the projection would pass as well.
  EXPECT_GT(2 * projected, count) << "the projection moved too few systems beyond the tolerance";
}

std::vector<ProjectionCase> projection_cases() {
  std::vector<ProjectionCase> cases;
  for (const ModelInfo& m : catalogue_info())
    if (m.rows() > 0)
      for (Method method : {Method::kRk4, Method::kDopri5}) cases.emplace_back(m.name, method);
  return cases;
}

std::string projection_case_name(const ::testing::TestParamInfo<ProjectionCase>& info) {
  const auto& [name, method] = info.param;
  return name + (method == Method::kRk4 ? "_rk4" : "_dopri5");
}

INSTANTIATE_TEST_SUITE_P(Catalogue, GpuProjection, ::testing::ValuesIn(projection_cases()),
                         projection_case_name);

// The controller's settings of most cases here: every row a servo row, with a robust term.
void robust_control(const ModelInfo& m, Actuation actuation, ControlOptions& c) {
  c.servo_rows = all_rows_mask(m.rows());
  c.actuation = actuation;
  c.gain = 1.0;
  c.epsilon = 1.0;  // gain / epsilon, the term's stiffness at sigma = 0, well inside RK4's
}

// Controlled runs (kernels/uk/servo_control.hpp) take the general fused kernel: the plant's
// parameters varied, the controller's left at the defaults, so that every system tracks with
// its own error; the GPU matches the CPU as closely as an uncontrolled run. `control` sets the
// controller (rows, actuation, robust term); `report`, when given, gets the GPU's report.
template <class Control>
void expect_controlled_runs_agree(const ModelInfo& m, Precision precision, Method method,
                                  Control&& control, GpuRunReport* report = nullptr) {
  const int count = 200;
  Batch batch = varied_batch(m, count);
  const std::vector<double> nominal = m.default_params();
  batch.control_params.resize(nominal.size() * count);
  for (std::size_t k = 0; k < nominal.size(); ++k)
    for (int i = 0; i < count; ++i) batch.control_params[k * count + i] = nominal[k];
  EnsembleSettings s = settings_for(m, method, precision);
  s.control.active = true;
  control(s.control);
  s.gpu_path = GpuPath::kFused;
  BatchResults cpu, gpu;
  run_ensemble_cpu(batch, s, cpu);
  const GpuRunReport gpu_report = run_ensemble_gpu(batch, s, gpu, {}, false);
  if (report != nullptr) *report = gpu_report;
  double tol = tolerance(method, precision);
  if (precision == Precision::kFp32) tol = std::max(tol, 4.0 * fp32_error(batch, s, cpu));
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ(gpu.status[i], cpu.status[i]) << "system " << i;
    for (int j = 0; j < m.n; ++j)
      EXPECT_PRED4(close, gpu.q_at(j, i), cpu.q_at(j, i), tol, 1.0) << "q" << j << " of " << i;
    for (int r = 0; r < m.residual_slots(); ++r)
      EXPECT_PRED4(close, gpu.residual_at(r, i), cpu.residual_at(r, i), tol, 1.0)
          << "residual slot " << r << " of " << i;
    EXPECT_PRED4(close, gpu.control_effort_max[i], cpu.control_effort_max[i], tol,
                 cpu.control_effort_max[i])
        << "control effort of " << i;
    EXPECT_GT(cpu.control_effort_max[i], 0.0) << "system " << i;
  }
}

using ControlCase = std::tuple<std::string, Precision>;

class GpuControl : public ::testing::TestWithParam<ControlCase> {};

TEST_P(GpuControl, ControlledRunsMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const auto& [name, precision] = GetParam();
  const ModelInfo& m = *find_model(name);
  expect_controlled_runs_agree(m, precision, Method::kRk4,
                               [&](ControlOptions& c) { robust_control(m, Actuation::kFull, c); });
}

// scara's definition with an actuation matrix of expressions (docs/CONTROL.md) that depends on
// the coordinates and on a parameter the plant and the controller disagree on.
TEST(GpuControlMatrix, AnActuationMatrixOfExpressionsMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  const auto matrix = nlohmann::json::parse(R"j([["1 + 0.1 * cos(q2)", "0", "0", "0"],
    ["0.1 * sin(q1)", "1", "0", "0"], ["0", "0", "1", "0"], ["0", "0", "0", "0.5 + m4"]])j");
  const auto model = with_actuation_matrix(*example_model("scara"), matrix, "control.actuation");
  for (const Precision precision : {Precision::kFp64, Precision::kFp32})
    expect_controlled_runs_agree(*model, precision, Method::kRk4, [&](ControlOptions& c) {
      robust_control(*model, Actuation::kMatrix, c);
    });
}

// Servo rows of a higher relative degree (kernels/uk/servo_derivatives.hpp): the flexible joint's
// link-velocity row followed through its third derivative by torques on the motors alone, as
// docs/CONTROL.md's "Relative degree" sets it up, for the built-in and for its definition (a user
// model), both precisions and both methods. On a CUDA device the kernel is compiled for the model
// at run time, and the report says so; the host emulation runs the same FusedSystem
// instantiation, compiled ahead of time.
TEST(GpuControlRelativeDegree, MotorTorquesThroughTheSpringsMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const ModelInfo& built_in = *find_model("flexible_joint");
  const auto definition = example_model("flexible_joint");
  const auto motors = [&](ControlOptions& c) {
    c.servo_rows = all_rows_mask(built_in.rows());
    c.actuation = Actuation::kCoordinates;
    c.actuated = 0;
    for (const char* motor : {"m1ang", "m2ang"}) {
      const auto& names = built_in.coordinates;
      const auto at = std::find(names.begin(), names.end(), motor) - names.begin();
      ASSERT_LT(at, static_cast<std::ptrdiff_t>(names.size())) << motor;
      c.actuated |= std::uint64_t{1} << at;
    }
    c.higher_degree_rows = 1;
    c.relative_degree[0] = 3;
  };
  for (const ModelInfo* m : {&built_in, definition.get()})
    for (const Precision precision : {Precision::kFp64, Precision::kFp32})
      for (const Method method : {Method::kRk4, Method::kDopri5}) {
        SCOPED_TRACE(std::string(m->user ? "definition " : "built-in ") +
                     (precision == Precision::kFp64 ? "FP64 " : "FP32 ") +
                     (method == Method::kRk4 ? "RK4" : "DOPRI5"));
        GpuRunReport report;
        expect_controlled_runs_agree(*m, precision, method, motors, &report);
        if (testing::emulated_gpu()) {
          EXPECT_TRUE(report.kernel.empty()) << report.kernel;
        } else {
          EXPECT_EQ(report.kernel.rfind("compiled for the model", 0), 0u) << report.kernel;
        }
      }
}

std::string control_case_name(const ::testing::TestParamInfo<ControlCase>& info) {
  const auto& [name, precision] = info.param;
  return name + (precision == Precision::kFp64 ? "_fp64" : "_fp32");
}

INSTANTIATE_TEST_SUITE_P(Models, GpuControl,
                         ::testing::Combine(::testing::Values("scara", "slider_crank", "four_bar"),
                                            ::testing::Values(Precision::kFp64, Precision::kFp32)),
                         control_case_name);

// A batch that needs many chunks (a small memory budget) gives the results of one chunk, and
// reports every system exactly once, in order.
TEST(GpuChunks, ManySmallChunksEqualOneLargeRun) {
  SKIP_WITHOUT_GPU();
  const ModelInfo& m = *find_model("scara");
  const int count = 20000;
  const Batch batch = varied_batch(m, count);
  EnsembleSettings s = settings_for(m, Method::kRk4, Precision::kFp64);
  BatchResults whole, chunked;
  const std::vector<std::int32_t> recorded = {count - 1, 0, 12345};  // not in system order
  const GpuRunReport one = run_ensemble_gpu(batch, s, whole, recorded);
  s.gpu_memory_budget = 4u << 20;  // a few thousand systems at a time
  const GpuRunReport many = run_ensemble_gpu(batch, s, chunked, recorded);
  if (!testing::emulated_gpu()) {  // the emulation chunks small batches on purpose
    EXPECT_EQ(one.chunks, 1);
  }
  EXPECT_GE(many.chunks, 3);
  const auto expect_equal = [&](const BatchResults& other) {
    testing::expect_identical(whole, other);
  };
  expect_equal(chunked);
  if (testing::emulated_gpu()) {
    // Chunks of 7 systems: thousands of turns of the two-slot pipeline, chunks that end inside
    // a block, recorded systems alone in their chunk.
    ::setenv("UKES_HOST_GPU_MAX_CHUNK", "7", 1);
    BatchResults tiny;
    const GpuRunReport turns = run_ensemble_gpu(batch, s, tiny, recorded);
    ::unsetenv("UKES_HOST_GPU_MAX_CHUNK");
    EXPECT_EQ(turns.chunks, (count + 6) / 7);
    expect_equal(tiny);
  }
}

// A system that cannot meet its constraints fails alone, the same way on both backends.
TEST(GpuFailures, AnUnreachableScaraTargetFailsOnlyItsSystem) {
  SKIP_WITHOUT_GPU();
  const ModelInfo& m = *find_model("scara");
  Batch batch = varied_batch(m, 64);
  const int yc = m.param_index("yc");
  ASSERT_GE(yc, 0);
  batch.param(yc, 5) = 1.0;  // a circle beyond the arm's reach l1 + l2 = 0.45
  EnsembleSettings s = settings_for(m, Method::kDopri5, Precision::kFp64);
  BatchResults cpu, gpu;
  run_ensemble_cpu(batch, s, cpu);
  run_ensemble_gpu(batch, s, gpu);
  EXPECT_EQ(gpu.status, cpu.status);
  EXPECT_NE(gpu.status[5], 0);
  for (int i = 0; i < 64; ++i) {
    if (i != 5) {
      EXPECT_EQ(gpu.status[i], 0) << i;
    }
  }
}

}  // namespace
}  // namespace ukes
