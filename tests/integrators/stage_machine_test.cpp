// SystemKernel takes an RK4 step one evaluation at a time (kernels/ensemble/system_kernel.hpp).
// Here the same steps are written as the textbook loop, each stage from the one before, with
// the right-hand side called in place: the state machine must hand every stage the same time and
// state, to the bit. SCARA's rows depend on time, so a stage evaluated at a wrong time shows.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/ensemble/system_kernel.hpp"
#include "kernels/models/scara.hpp"
#include "support/model_test_support.hpp"

namespace ukes {
namespace {

using Model = models::Scara;
constexpr int n = Model::kN;
using State = Vec<double, 2 * n>;

State derivative(const double* p, double t, const State& x) {
  Vec<double, n> q, qd;
  for (int j = 0; j < n; ++j) {
    q[j] = x[j];
    qd[j] = x[n + j];
  }
  const DynamicsEval<Model, double> e =
      evaluate_dynamics<Model, double>(Model{}, q, qd, t, p, DynamicsSettings<double>{30, 225});
  State dx;
  for (int j = 0; j < n; ++j) {
    dx[j] = qd[j];
    dx[n + j] = e.qdd[j];
  }
  return dx;
}

// Fixed steps of dt from 0; the last one shortened to end exactly on t_end, as a run with two
// samples takes them.
State textbook_rk4(const double* p, State x, double t_end, double dt, int& steps) {
  double t = 0;
  State k1 = derivative(p, t, x);
  for (steps = 0;;) {
    const bool last = t + 1.0001 * dt >= t_end;
    const double h = last ? t_end - t : dt, h2 = 0.5 * h;
    State y;
    for (int i = 0; i < 2 * n; ++i) y[i] = x[i] + h2 * k1[i];
    const State k2 = derivative(p, t + h2, y);
    for (int i = 0; i < 2 * n; ++i) y[i] = x[i] + h2 * k2[i];
    const State k3 = derivative(p, t + h2, y);
    for (int i = 0; i < 2 * n; ++i) y[i] = x[i] + h * k3[i];
    const State k4 = derivative(p, t + h, y);
    for (int i = 0; i < 2 * n; ++i) x[i] = x[i] + h / 6 * (k1[i] + 2 * (k2[i] + k3[i]) + k4[i]);
    t = last ? t_end : t + h;
    k1 = derivative(p, t, x);
    ++steps;
    if (last) return x;
  }
}

TEST(StageMachine, Rk4StepsEqualTheTextbookLoopBitForBit) {
  std::vector<double> p;
  for (const ParamSpec& spec : Model::kParams) p.push_back(spec.value);
  Vec<double, n> q, qd;
  Model::initial_state(p.data(), q, qd);
  State x0;
  for (int j = 0; j < n; ++j) {
    x0[j] = q[j];
    x0[n + j] = qd[j];
  }
  const double t_end = 0.3, dt = 0.007;  // 0.3 / 0.007 is no whole number: a short last step
  int textbook_steps = 0;
  const State expected = textbook_rk4(p.data(), x0, t_end, dt, textbook_steps);

  std::vector<double> q0(q.v, q.v + n), qd0(qd.v, qd.v + n);
  const BatchInputView in{1, p.data(), q0.data(), qd0.data()};
  testing::OneSystemOutput<Model> out;
  RunSettings<double> s;
  s.method = Method::kRk4;
  s.t_end = t_end;
  s.dt = dt;
  s.samples = 2;
  s.dynamics = {30, 225};
  SystemKernel<Model, double>::run(in, s, 0, out.view());

  ASSERT_EQ(out.status, static_cast<int>(Status::kOk));
  EXPECT_EQ(out.steps, textbook_steps);
  EXPECT_EQ(out.t, t_end);
  for (int j = 0; j < n; ++j) {
    EXPECT_EQ(std::memcmp(&out.q[j], &expected[j], sizeof(double)), 0) << "q" << j;
    EXPECT_EQ(std::memcmp(&out.qd[j], &expected[n + j], sizeof(double)), 0) << "qd" << j;
  }
}

}  // namespace
}  // namespace ukes
