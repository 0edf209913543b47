// The stiff method on the GPU's fused path against the CPU backend: every catalogue model in both
// precisions, and the friction ring through sticking. The CUDA module has this kernel only as
// compiled for the model at run time (kernels/backend/device/system_kernels.hpp); the host
// emulation compiles the same code ahead of time. As for DOPRI5 (gpu_agreement_test.cpp), the
// adaptive step sequences may part at a rounding-level difference, so final states agree within
// the integration tolerances.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/backend/gpu/gpu_backend.hpp"
#include "kernels/models/model_info.hpp"
#include "tests/support/gpu_support.hpp"

namespace ukes {
namespace {

// `count` systems around the model's defaults: parameters within +-4%, assembled.
Batch varied(const ModelInfo& m, int count) {
  Batch b = Batch::defaults(m, count);
  for (int i = 0; i < count; ++i) {
    const double u = (i % 13) / 12.0 - 0.5;
    for (std::size_t k = 0; k < m.params.size(); ++k)
      if (!m.params[k].structural) b.param(static_cast<int>(k), i) *= 1.0 + 0.08 * u;
  }
  return b;
}

void expect_backends_agree(const Batch& batch, const EnsembleSettings& s, const char* what) {
  BatchResults cpu, gpu;
  const std::vector<std::int32_t> recorded = {0, batch.count - 1};
  run_ensemble_cpu(batch, s, cpu, recorded);
  const GpuRunReport report = run_ensemble_gpu(batch, s, gpu, recorded, false);
  EXPECT_EQ(report.path, GpuPath::kFused) << what;
  const double tol = s.precision == Precision::kFp64 ? 1e-6 : 1e-2;
  int ok = 0;
  for (int i = 0; i < batch.count; ++i) {
    ASSERT_EQ(gpu.status[i], cpu.status[i]) << what << ", system " << i;
    if (cpu.status[i] != 0) continue;
    ++ok;
    for (int j = 0; j < cpu.n; ++j) {
      const double q = cpu.q_at(j, i), qd = cpu.qd_at(j, i);
      EXPECT_NEAR(gpu.q_at(j, i), q, tol * std::max(1.0, std::abs(q))) << what << " q" << j;
      EXPECT_NEAR(gpu.qd_at(j, i), qd, tol * std::max(1.0, std::abs(qd))) << what << " qd" << j;
    }
    for (int r = 0; r < cpu.residual_slots; ++r)
      EXPECT_NEAR(gpu.residual_at(r, i), cpu.residual_at(r, i),
                  tol * std::max(1.0, std::abs(cpu.residual_at(r, i))))
          << what << " residual " << r;
  }
  EXPECT_GT(2 * ok, batch.count) << what << ": too few systems ended ok to compare";
}

using StiffCase = std::tuple<std::string, Precision>;
class GpuStiff : public ::testing::TestWithParam<StiffCase> {};

TEST_P(GpuStiff, RosenbrockRunsMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const auto& [name, precision] = GetParam();
  const ModelInfo& m = *find_model(name);
  EnsembleSettings s = EnsembleSettings::for_model(m);
  s.method = Method::kRosenbrock;
  s.precision = precision;
  s.assemble = true;
  s.samples = 5;
  s.t_end = s.t0 + 0.2 * (m.t_end - s.t0);
  s.rtol = s.atol = precision == Precision::kFp64 ? 1e-9 : 1e-5;
  expect_backends_agree(varied(m, 64), s, name.c_str());
}

std::vector<StiffCase> stiff_cases() {
  std::vector<StiffCase> cases;
  for (const ModelInfo& m : catalogue_info())
    for (Precision p : {Precision::kFp64, Precision::kFp32}) cases.emplace_back(m.name, p);
  return cases;
}

std::string stiff_case_name(const ::testing::TestParamInfo<StiffCase>& c) {
  return std::get<0>(c.param) + (std::get<1>(c.param) == Precision::kFp64 ? "_fp64" : "_fp32");
}

INSTANTIATE_TEST_SUITE_P(EveryModel, GpuStiff, ::testing::ValuesIn(stiff_cases()), stiff_case_name);

// The stiff study itself: friction rings whose regularization speed spans 1e-6 .. 1e-4, through
// sticking, to t = 10.
TEST(GpuStiffStudy, StickingFrictionRingsMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const ModelInfo& m = *find_model("friction_ring");
  Batch batch = Batch::defaults(m, 96);
  const int eps = m.param_index("eps"), mu = m.param_index("mu");
  for (int i = 0; i < batch.count; ++i) {
    batch.param(eps, i) = std::pow(10.0, -6.0 + 2.0 * (i % 12) / 11.0);
    batch.param(mu, i) = 0.15 + 0.1 * (i / 12) / 7.0;
  }
  EnsembleSettings s = EnsembleSettings::for_model(m);
  s.method = Method::kRosenbrock;
  s.t_end = 10.0;
  s.rtol = s.atol = 1e-8;
  expect_backends_agree(batch, s, "sticking friction rings");
}

}  // namespace
}  // namespace ukes
