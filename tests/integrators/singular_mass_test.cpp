// A model whose mass matrix is only positive semi-definite, integrated through the same
// SystemKernel every backend runs: a pendulum in Cartesian coordinates with its angle as a third,
// massless coordinate (q = (x, y, th), M = diag(m, m, 0), rods x = l sin th, y = -l cos th).
// [M; A] has full column rank, so the motion is unique (Udwadia & Phohomsiri 2006) and must
// follow the reduced equation th'' = -(g / l) sin th, integrated here on its own.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/ensemble/system_kernel.hpp"
#include "support/model_test_support.hpp"

namespace ukes {
namespace {

struct MasslessAnglePendulum {
  static constexpr const char* kName = "massless_angle_pendulum";
  static constexpr const char* kSource = "test model: singular mass matrix";
  static constexpr int kN = 3;
  static constexpr int kPositionRows = 2;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  enum Param { m, l, g };
  static constexpr ParamSpec kParams[] = {{"m", 0.7}, {"l", 1.3}, {"g", 9.81}};
  static constexpr const char* kCoordinates[] = {"x", "y", "th"};
  static constexpr double kTEnd = 2.0;
  static constexpr Gains kGains = {};

  template <class T>
  UKES_HD static void mass(const Vec<T, kN>&, T, const T* p, Mat<T, kN, kN>& M) {
    M = Mat<T, kN, kN>::zero();
    M(0, 0) = M(1, 1) = p[m];
  }
  template <class T>
  UKES_HD static void force(const Vec<T, kN>&, const Vec<T, kN>&, T, const T* p, Vec<T, kN>& Q) {
    Q = Vec<T, kN>::zero();
    Q[1] = -p[m] * p[g];
  }
  template <class S, class T>
  UKES_HD static void position_rows(const Vec<S, kN>& q, S, const T* p, S* phi) {
    phi[0] = q[0] - p[l] * sin(q[2]);
    phi[1] = q[1] + p[l] * cos(q[2]);
  }
  template <class S, class T>
  UKES_HD static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}
  template <class T>
  UKES_HD static void initial_state(const T* p, Vec<T, kN>& q, Vec<T, kN>& qd) {
    const T th = T(1.1), thd = T(0.4);
    q[0] = p[l] * sin(th);
    q[1] = -p[l] * cos(th);
    q[2] = th;
    qd[0] = p[l] * cos(th) * thd;
    qd[1] = p[l] * sin(th) * thd;
    qd[2] = thd;
  }
};

// th(t_end) of th'' = -(g / l) sin th by RK4 with step dt.
double reduced_pendulum(double th, double thd, double g_over_l, double t_end, double dt) {
  const auto f = [&](double a, double b, double& da, double& db) {
    da = b;
    db = -g_over_l * std::sin(a);
  };
  const int steps = static_cast<int>(std::lround(t_end / dt));
  for (int k = 0; k < steps; ++k) {
    double k1a, k1b, k2a, k2b, k3a, k3b, k4a, k4b;
    f(th, thd, k1a, k1b);
    f(th + 0.5 * dt * k1a, thd + 0.5 * dt * k1b, k2a, k2b);
    f(th + 0.5 * dt * k2a, thd + 0.5 * dt * k2b, k3a, k3b);
    f(th + dt * k3a, thd + dt * k3b, k4a, k4b);
    th += dt / 6 * (k1a + 2 * k2a + 2 * k3a + k4a);
    thd += dt / 6 * (k1b + 2 * k2b + 2 * k3b + k4b);
  }
  return th;
}

TEST(SingularMass, MasslessCoordinateIntegratesLikeTheReducedPendulum) {
  using Model = MasslessAnglePendulum;
  constexpr int n = Model::kN, slots = kResidualSlots<Model>;
  const double p[] = {0.7, 1.3, 9.81};
  Vec<double, n> q, qd;
  Model::initial_state(p, q, qd);
  std::vector<double> q0(q.v, q.v + n), qd0(qd.v, qd.v + n);
  const BatchInputView in{1, p, q0.data(), qd0.data()};
  testing::OneSystemOutput<Model> out;
  RunSettings<double> s;
  s.method = Method::kRk4;
  s.t_end = Model::kTEnd;
  s.dt = 1e-3;
  SystemKernel<Model, double>::run(in, s, 0, out.view());

  ASSERT_EQ(out.status, static_cast<int>(Status::kOk))
      << status_name(static_cast<Status>(out.status));
  EXPECT_EQ(out.steps, 2000);
  const double th_ref = reduced_pendulum(1.1, 0.4, p[2] / p[1], s.t_end, s.dt);
  EXPECT_NEAR(out.q[2], th_ref, 1e-9);
  EXPECT_NEAR(out.q[0], p[1] * std::sin(th_ref), 1e-8);
  EXPECT_NEAR(out.q[1], -p[1] * std::cos(th_ref), 1e-8);
  for (int r = 0; r < slots; ++r) EXPECT_LT(out.residual[r], 1e-9) << "residual slot " << r;
  EXPECT_LT(out.inconsistency, 1e-12);
  EXPECT_GT(out.force, 0.0);  // the rod pulls
}

}  // namespace
}  // namespace ukes

namespace ukes {
namespace {

// The same pendulum written as a user model (docs/MODEL_FORMAT.md): the singular mass is solved
// for on the user-model path alike.
constexpr const char* kMasslessAngleDefinition = R"json({
  "name": "massless_angle_pendulum",
  "coordinates": ["x", "y", "th"],
  "parameters": [{"name": "m", "value": 0.7}, {"name": "l", "value": 1.3},
                 {"name": "g", "value": 9.81}, {"name": "th0", "value": 1.1},
                 {"name": "thd0", "value": 0.4}],
  "mass": {"diagonal": ["m", "m", 0]},
  "force": [0, "-m * g", 0],
  "position_constraints": ["x - l * sin(th)", "y + l * cos(th)"],
  "initial_state": {"q": ["l * sin(th0)", "-l * cos(th0)", "th0"],
                    "qd": ["l * cos(th0) * thd0", "l * sin(th0) * thd0", "thd0"]},
  "t_end": 2.0
})json";

TEST(SingularMass, UserModelWithAMasslessCoordinateIntegratesLikeTheReducedPendulum) {
  const auto model = make_user_model_info(parse_user_model_text(kMasslessAngleDefinition));
  const Batch batch = Batch::defaults(*model, 1);
  EnsembleSettings s = EnsembleSettings::for_model(*model);
  s.method = Method::kRk4;
  s.dt = 1e-3;
  s.threads = 1;
  BatchResults r;
  run_ensemble_cpu(batch, s, r);
  ASSERT_EQ(r.status[0], static_cast<int>(Status::kOk)) << status_name(Status(r.status[0]));
  EXPECT_EQ(r.steps[0], 2000);
  const double th_ref = reduced_pendulum(1.1, 0.4, 9.81 / 1.3, s.t_end, s.dt);
  EXPECT_NEAR(r.q_at(2, 0), th_ref, 1e-9);
  EXPECT_NEAR(r.q_at(0, 0), 1.3 * std::sin(th_ref), 1e-8);
  EXPECT_NEAR(r.q_at(1, 0), -1.3 * std::cos(th_ref), 1e-8);
  for (int k = 0; k < r.residual_slots; ++k) EXPECT_LT(r.residual_at(k, 0), 1e-9) << "slot " << k;
}

}  // namespace
}  // namespace ukes
