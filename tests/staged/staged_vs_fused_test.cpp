// The staged path (kernels/staged/, CPU executor: per-system Cholesky and Jacobi SVD written into
// cuSOLVER's layouts and conventions) against the fused SystemKernel for every catalogue model.
//
// Both run the same control logic and the same UK finish; they differ in rounding only (the
// staged combine step rebuilds B^+ from U, S, V). RK4 takes identical steps, so its results must
// agree to rounding as amplified by the dynamics; DOPRI5 may decide a step differently at the
// rounding level, so it must agree within its tolerances.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "kernels/models/catalogue.hpp"
#include "staged/staged_support.hpp"
#include "support/model_test_support.hpp"

namespace ukes {
namespace {

using namespace ukes::testing;

constexpr int kSystems = 5;
const std::vector<std::int32_t> kRecorded = {0, 3};

// Up to 2 s of each model's motion: long enough for hundreds of steps and every constraint
// regime, short enough that the dynamics amplify rounding differences by less than 1e3 (four_bar
// and ellipse_particle grow them fastest).
constexpr double kHorizon = 2.0;

EnsembleSettings settings_for(const ModelInfo& m, Method method, Precision precision) {
  EnsembleSettings e = EnsembleSettings::for_model(m);
  e.method = method;
  e.precision = precision;
  e.t_end = std::min(m.t_end, kHorizon);
  e.samples = 11;
  if (method == Method::kRk4) e.dt = e.t_end / 400;
  if (precision == Precision::kFp32) e.rtol = e.atol = 1e-5;
  return e;
}

int count_ok(const BatchResults& r) {
  return static_cast<int>(std::count(r.status.begin(), r.status.end(), 0));
}

void print(const char* what, const char* model, const Agreement& a, const BatchResults& f) {
  std::printf("%-8s %-24s state %.1e  maxima %.1e  trajectory %.1e  steps %lld/%lld  %s\n", what,
              model, a.state, a.maxima, a.trajectory, static_cast<long long>(f.steps[0]),
              static_cast<long long>(f.rejected[0]),
              a.step_mismatches > 0 ? "(step counts differ)" : "");
}

// Runs every catalogue model through both paths and checks the agreement with `check`.
template <class T, class Check>
void for_every_model(const char* what, Method method, const Check& check) {
  const Precision precision = sizeof(T) == 8 ? Precision::kFp64 : Precision::kFp32;
  for_each_model([&]<class M>() {
    const ModelInfo* info = find_model(M::kName);
    ASSERT_NE(info, nullptr) << M::kName;
    SCOPED_TRACE(M::kName);
    const EnsembleSettings e = settings_for(*info, method, precision);
    const PathRuns r = run_both_paths<M, T>(perturbed_batch(*info, kSystems), e, kRecorded);
    // Not vacuous: every system integrated to the end.
    EXPECT_EQ(count_ok(r.fused), kSystems);
    for (int i = 0; i < kSystems; ++i) EXPECT_GT(r.fused.steps[i], 0);
    const Agreement a = compare_runs(r.fused, r.staged);
    print(what, M::kName, a, r.fused);
    EXPECT_EQ(a.status_mismatches, 0);
    check(a);
  });
}

// The fused path factors the usual full-rank B by QR, the staged one by SVD: two backward-stable
// factorizations whose rounding differs, and grows along a trajectory (slider_crank's samples
// measured 1.1e-12 apart, its final states 1e-13).
TEST(StagedCpu, Rk4Fp64AgreesWithFusedToRoundingForEveryModel) {
  for_every_model<double>("rk4/64", Method::kRk4, [](const Agreement& a) {
    EXPECT_EQ(a.step_mismatches, 0);
    EXPECT_EQ(a.time_mismatches, 0);
    EXPECT_LE(a.state, 1e-12);
    EXPECT_LE(a.maxima, 1e-12);
    EXPECT_LE(a.trajectory, 2e-12);
  });
}

// Within the tolerances: rtol = atol = 1e-9 bound each step's local error; two runs that differ by
// rounding and perhaps a step decided differently stay within a few hundred local errors.
TEST(StagedCpu, Dopri5Fp64AgreesWithFusedWithinTolerancesForEveryModel) {
  for_every_model<double>("dopri5/64", Method::kDopri5, [](const Agreement& a) {
    EXPECT_EQ(a.time_mismatches, 0);  // both end exactly on t_end
    EXPECT_LE(a.state, 1e-7);
    EXPECT_LE(a.maxima, 1e-7);
    EXPECT_LE(a.trajectory, 1e-7);
  });
}

// FP32: the same comparison at single-precision rounding (eps 1.2e-7), amplified likewise.
TEST(StagedCpu, Rk4Fp32AgreesWithFusedForEveryModel) {
  for_every_model<float>("rk4/32", Method::kRk4, [](const Agreement& a) {
    EXPECT_EQ(a.step_mismatches, 0);
    EXPECT_EQ(a.time_mismatches, 0);
    EXPECT_LE(a.state, 1e-3);
    EXPECT_LE(a.maxima, 1e-3);
    EXPECT_LE(a.trajectory, 1e-3);
  });
}

// Where the step-size sequences part at a rounding-level difference, the runs differ by what the
// tolerances allow: friction_ring's regularized Coulomb friction is stiff near v = 0 (about 40%
// of its FP32 steps are rejected), and its sequences part by up to 8e-3 of the state (the GPU
// agreement test's FP32 DOPRI5 bound is 1e-2 likewise).
TEST(StagedCpu, Dopri5Fp32AgreesWithFusedWithinTolerancesForEveryModel) {
  for_every_model<float>("dopri5/32", Method::kDopri5, [](const Agreement& a) {
    EXPECT_EQ(a.time_mismatches, 0);
    EXPECT_LE(a.state, 1e-2);
    EXPECT_LE(a.maxima, 1e-2);
    EXPECT_LE(a.trajectory, 1e-2);
  });
}

// Assembly of the initial condition and projection after every accepted step, for models whose
// rows drift without them.
template <class M>
void check_projected(Method method) {
  const ModelInfo* info = find_model(M::kName);
  ASSERT_NE(info, nullptr);
  EnsembleSettings e = settings_for(*info, method, Precision::kFp64);
  e.assemble = e.projection = true;
  const PathRuns runs = run_both_paths<M, double>(perturbed_batch(*info, kSystems), e, kRecorded);
  EXPECT_EQ(count_ok(runs.fused), kSystems);
  const Agreement a = compare_runs(runs.fused, runs.staged);
  print(method == Method::kRk4 ? "proj/rk4" : "proj/dp5", M::kName, a, runs.fused);
  EXPECT_EQ(a.status_mismatches, 0);
  const double bound = method == Method::kRk4 ? 1e-12 : 1e-7;
  if (method == Method::kRk4) {
    EXPECT_EQ(a.step_mismatches, 0);
  }
  EXPECT_LE(a.state, bound);
  EXPECT_LE(a.maxima, bound);
  EXPECT_LE(a.trajectory, bound);
  // The projection worked: the position rows hold to its tolerance (1000 eps) at every sample.
  for (int r = 0; r < info->position_rows; ++r)
    EXPECT_LE(max_abs_sampled_residual(runs.staged, r), 1e-11) << "row " << r;
}

TEST(StagedCpu, AssemblyAndProjectionScara) {
  check_projected<models::Scara>(Method::kRk4);
  check_projected<models::Scara>(Method::kDopri5);
}

TEST(StagedCpu, AssemblyAndProjectionFourBar) {
  check_projected<models::FourBar>(Method::kRk4);
  check_projected<models::FourBar>(Method::kDopri5);
}

}  // namespace
}  // namespace ukes
