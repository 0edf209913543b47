// two_rod_pendulum (docs/MODELS.md sec. 5): bob held by two rods, out-of-plane motion.
#include "kernels/models/two_rod_pendulum.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/uk/constraint_form.hpp"
#include "kernels/uk/dynamics.hpp"
#include "support/model_test_support.hpp"

namespace ukes {
namespace {

using Model = models::TwoRodPendulum;
const double kDefaults[] = {1.0, 1.0, 10.0, 1.0};  // L1, L2, g, m
using namespace ukes::testing;

// The catalogue metadata (names, defaults, t_end, gains) is asserted in tests/catalogue.
TEST(TwoRodPendulumModel, DefaultInitialCondition) {
  const ModelInfo* info = find_model("two_rod_pendulum");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->q0, (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(info->qd0, (std::vector<double>{0, 4, 0}));
}

TEST(TwoRodPendulumModel, InitialStateIsConsistentForOtherRodLengths) {
  for (const auto& lengths : {std::array<double, 2>{2.0, 1.5}, std::array<double, 2>{0.7, 1.3}}) {
    const double p[] = {lengths[0], lengths[1], 10.0, 1.0};
    Vec<double, 3> q, qd;
    Model::initial_state(p, q, qd);
    EXPECT_TRUE(on_constraint_set<Model>(q, qd, 0.0, p, 1e-14, 1e-14));
    EXPECT_EQ(qd[1], 4.0);
  }
}

TEST(TwoRodPendulumModel, ConstraintFormMatchesReference) {
  UniformRandom u(5);
  for (int trial = 0; trial < 20; ++trial) {
    const double L1 = 1.0 + 0.5 * u(), L2 = 1.0 + 0.5 * u();
    const double p[] = {L1, L2, 10.0, 1.0};
    Vec<double, 3> q, qd;
    for (int j = 0; j < 3; ++j) {
      q[j] = u();
      qd[j] = 3.0 * u();
    }
    const auto f = constraint_form<Model, double>(Model{}, q, qd, 0.0, p);
    // Reference (rows halved): A = [[x, y, z], [x - L1, y, z - L2]], b = -|qd|^2 [1, 1].
    const double Aref[2][3] = {{q[0], q[1], q[2]}, {q[0] - L1, q[1], q[2] - L2}};
    const double v2 = qd[0] * qd[0] + qd[1] * qd[1] + qd[2] * qd[2];
    for (int r = 0; r < 2; ++r) {
      for (int j = 0; j < 3; ++j) EXPECT_NEAR(f.A(r, j), 2.0 * Aref[r][j], 1e-14);
      EXPECT_NEAR(f.b[r], -2.0 * v2, 1e-13 * v2);
    }
  }
}

// Must hold: the UK acceleration equals the thesis' closed form (eq. 78, L1 = L2 = m = 1) to 1e-12
// relative at any state on the constraint set. The two spheres meet on the circle of centre
// (1/2, 0, 1/2) and radius 1/sqrt(2) in the plane x + z = 1; admissible velocities are along the
// cross product of the two rows of A.
TEST(TwoRodPendulumModel, UkAccelerationMatchesThesisEq78) {
  UniformRandom u(17);
  const double g = 10.0;
  double worst = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const double ang = 3.14159265358979323846 * u();
    Vec<double, 3> q, qd;
    q[0] = 0.5 + 0.5 * std::cos(ang);
    q[1] = std::sin(ang) / std::sqrt(2.0);
    q[2] = 0.5 - 0.5 * std::cos(ang);
    const double r1[3] = {q[0], q[1], q[2]}, r2[3] = {q[0] - 1, q[1], q[2] - 1};
    const double n[3] = {r1[1] * r2[2] - r1[2] * r2[1], r1[2] * r2[0] - r1[0] * r2[2],
                         r1[0] * r2[1] - r1[1] * r2[0]};
    const double speed = 5.0 * u();
    for (int j = 0; j < 3; ++j) qd[j] = speed * n[j];
    const auto f = constraint_form<Model, double>(Model{}, q, qd, 0.0, kDefaults);
    ASSERT_LT(std::abs(f.value[0]) + std::abs(f.value[1]), 1e-14);
    ASSERT_LT(std::abs(f.rate[0]) + std::abs(f.rate[1]), 1e-13 * (1 + std::abs(speed)));

    const auto e = evaluate_dynamics<Model, double>(Model{}, q, qd, 0.0, kDefaults, {});
    ASSERT_TRUE(e.mass_ok);
    const double x = q[0], y = q[1], z = q[2];
    const double al = qd[0] * qd[0] + qd[1] * qd[1] + qd[2] * qd[2];
    const double D = x * x + 2 * y * y - 2 * x * z + z * z;
    const double ref[3] = {(-al * (x - z) + g * y * y) / D, -y * (2 * al + g * x - g * z) / D,
                           (al * (x - z) - g * y * y) / D};
    const double scale = std::sqrt(ref[0] * ref[0] + ref[1] * ref[1] + ref[2] * ref[2]);
    for (int j = 0; j < 3; ++j) {
      const double rel = std::abs(e.qdd[j] - ref[j]) / scale;
      worst = std::max(worst, rel);
      EXPECT_LT(rel, 1e-12) << "trial " << trial << " component " << j;
    }
  }
  std::printf("two_rod_pendulum: max relative deviation from eq. 78 = %.3g\n", worst);
}

// Must hold: the motion leaves the plane z = 0. Energy (1/2 m |v|^2 - m g x = 8 - 10 = -2) bounds
// the swing: the bob turns where x = 0.2, i.e. (on the plane x + z = 1) at z = 0.8.
TEST(TwoRodPendulumModel, MotionLeavesThePlaneZEqualsZero) {
  const SystemRun run = run_default_system("two_rod_pendulum", Method::kDopri5, 1e-10, 3001);
  ASSERT_TRUE(ran_to_end(run));
  const BatchResults& r = run.results;
  ASSERT_EQ(r.t[0], 3.0);
  double zmax = 0, energy_err = 0, plane_err = 0;
  for (int k = 0; k < r.samples; ++k) {
    const double x = r.traj_q_at(0, k, 0), z = r.traj_q_at(0, k, 2);
    double v2 = 0;
    for (int j = 0; j < 3; ++j) v2 += r.traj_qd_at(0, k, j) * r.traj_qd_at(0, k, j);
    zmax = std::max(zmax, z);
    energy_err = std::max(energy_err, std::abs(0.5 * v2 - 10.0 * x - (-2.0)));
    plane_err = std::max(plane_err, std::abs(x + z - 1.0));
  }
  std::printf(
      "two_rod_pendulum: max z = %.9f (turning point 0.8), max energy error %.3g, "
      "max |x + z - 1| = %.3g\n",
      zmax, energy_err, plane_err);
  EXPECT_EQ(r.traj_q_at(0, 0, 2), 0.0);
  EXPECT_GT(zmax, 0.5);
  EXPECT_NEAR(zmax, 0.8, 1e-5);
  EXPECT_LT(energy_err, 1e-7);
  EXPECT_LT(plane_err, 1e-8);
}

}  // namespace
}  // namespace ukes
