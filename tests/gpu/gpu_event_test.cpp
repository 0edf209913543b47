// Events on the GPU's fused path against the CPU backend: every method and precision over a
// sweep of pendulums whose crossings are recorded, a SCARA sweep stopped by a terminating
// event, and the bouncing particle's resets. The CUDA module has these kernels only as compiled
// for the model at run time (kernels/backend/device/system_kernels.hpp); the host emulation
// compiles the same code ahead of time. Adaptive step sequences may part at a rounding-level
// difference, so event times agree within the integration tolerance, counts exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "kernels/backend/gpu/gpu_backend.hpp"
#include "service/runspec/run_spec.hpp"
#include "tests/support/gpu_support.hpp"

namespace ukes {
namespace {

using nlohmann::json;

void expect_backends_agree(const json& spec, double tol) {
  const RunSpec rs = parse_run_spec(spec);
  BatchResults cpu, gpu;
  const std::vector<std::int32_t> recorded = {0, rs.batch.count - 1};
  run_ensemble_cpu(rs.batch, rs.settings, cpu, recorded);
  const GpuRunReport report = run_ensemble_gpu(rs.batch, rs.settings, gpu, recorded, true);
  EXPECT_EQ(report.path, GpuPath::kFused);
  ASSERT_EQ(gpu.events, cpu.events);
  ASSERT_EQ(gpu.event_records, cpu.event_records);
  EXPECT_EQ(gpu.status, cpu.status);
  EXPECT_EQ(gpu.event_count, cpu.event_count);
  ASSERT_EQ(gpu.event_t.size(), cpu.event_t.size());
  for (std::size_t k = 0; k < cpu.event_t.size(); ++k) {
    if (std::isnan(cpu.event_t[k])) {
      EXPECT_TRUE(std::isnan(gpu.event_t[k])) << k;
    } else {
      EXPECT_NEAR(gpu.event_t[k], cpu.event_t[k], tol) << k;
    }
  }
  for (std::size_t k = 0; k < cpu.event_qd.size(); ++k) {
    if (!std::isnan(cpu.event_qd[k])) {
      EXPECT_NEAR(gpu.event_qd[k], cpu.event_qd[k], tol * std::max(1.0, std::abs(cpu.event_qd[k])))
          << k;
    }
  }
  for (std::size_t k = 0; k < cpu.t.size(); ++k) EXPECT_NEAR(gpu.t[k], cpu.t[k], tol) << k;
}

using EventCase = std::tuple<std::string, std::string>;  // method, precision
class GpuEvents : public ::testing::TestWithParam<EventCase> {};

TEST_P(GpuEvents, PendulumCrossingsMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const auto& [method, precision] = GetParam();
  const bool fp64 = precision == "fp64";
  json spec = {
      {"model", "pendulum_polar"},
      {"precision", precision},
      {"sweep", {{"count", 48}, {"vary", {{"q0[1]", {{"uniform", {0.3, 1.2}}}}}}}},
      {"integrator",
       {{"method", method},
        {"rtol", fp64 ? 1e-10 : 1e-5},
        {"atol", fp64 ? 1e-10 : 1e-5},
        {"t_end", 6.0}}},
      {"events",
       {{{"name", "crossing"}, {"condition", "th"}, {"max", 8}},
        {{"name", "fast"}, {"condition", "th_dot * th_dot - 2 * g"}, {"direction", "rising"}}}}};
  if (method == "rk4") spec["integrator"]["dt"] = 2e-3;
  expect_backends_agree(spec, fp64 ? 1e-7 : 1e-3);
}

INSTANTIATE_TEST_SUITE_P(MethodsAndPrecisions, GpuEvents,
                         ::testing::Combine(::testing::Values("rk4", "dopri5", "rosenbrock"),
                                            ::testing::Values("fp64", "fp32")));

TEST(GpuEventActions, TerminateAndResetMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const json scara = {
      {"model", "scara"},
      {"assemble", true},
      {"sweep", {{"count", 16}, {"vary", {{"params.m4", {{"uniform", {0.3, 0.8}}}}}}}},
      {"integrator", {{"rtol", 1e-10}, {"atol", 1e-10}, {"t_end", 2.0}}},
      {"events",
       {{{"name", "leaves_workspace"},
         {"condition", "-l1 * sin(q1) - l2 * sin(q1 + q2) - 0.04"},
         {"direction", "rising"},
         {"action", "terminate"}}}}};
  expect_backends_agree(scara, 1e-7);
  const json bouncing = {
      {"model", "projectile_polar"},
      {"sweep", {{"count", 16}, {"vary", {{"qd0[0]", {{"uniform", {0.5, 2.0}}}}}}}},
      {"integrator", {{"rtol", 1e-10}, {"atol", 1e-10}, {"t_end", 2.0}}},
      {"events",
       {{{"name", "floor"},
         {"condition", "r * sin(th) + 0.5"},
         {"direction", "falling"},
         {"action", "reset"},
         {"reset",
          {{"qd",
            {"r_dot * (cos(th) * cos(th) - 0.8 * sin(th) * sin(th)) - 1.8 * r * th_dot * sin(th) * "
             "cos(th)",
             "th_dot * (sin(th) * sin(th) - 0.8 * cos(th) * cos(th)) - 1.8 * r_dot * sin(th) * "
             "cos(th) / r"}}}}}}}};
  expect_backends_agree(bouncing, 1e-7);
}

}  // namespace
}  // namespace ukes
