// The per-system integration engine (kernels/ensemble/system_kernel.hpp) run through the CPU
// backend (run_batch_cpu) on test-only models defined here, against independent solutions:
//  - an unconstrained harmonic oscillator (closed form);
//  - a planar pendulum in Cartesian coordinates with one position row, against the reduced
//    equation thdd = -(g/L) sin th integrated independently, rod tension included;
//  - DOPRI5's adaptive control meets the requested tolerance on a known solution;
//  - steps land exactly on the sample times (q = t^2 / 2 is integrated exactly by both methods);
//  - every failure status: max_steps, step_underflow/nonfinite (finite-time blow-up),
//    singular_mass (mass matrix that stops being positive definite), inconsistent (contradictory
//    rows; assembly that cannot succeed);
//  - a failing system never disturbs the others of its batch: the healthy systems' outputs are
//    bit-identical to those of a batch without the failing ones, and do not depend on which
//    systems record trajectories.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <vector>

#include "kernels/backend/cpu/cpu_backend_impl.hpp"
#include "kernels/ensemble/ensemble.hpp"

namespace ukes {

// gtest prints statuses by name (found by argument-dependent lookup).
[[maybe_unused]] static void PrintTo(Status s, std::ostream* os) { *os << status_name(s); }

namespace {

// ---------------------------------------------------------------- test-only models

// m x'' = -k x in each of two coordinates (different stiffness), no rows.
struct Oscillator {
  static constexpr const char* kName = "test_oscillator";
  static constexpr int kN = 2;
  static constexpr int kPositionRows = 0;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  enum { m, k1, k2 };
  static constexpr ParamSpec kParams[] = {{"m", 2.0}, {"k1", 8.0}, {"k2", 0.5}};
  template <class T>
  static void mass(const Vec<T, kN>&, T, const T* p, Mat<T, kN, kN>& M) {
    M = Mat<T, kN, kN>::identity();
    M(0, 0) = p[m];
    M(1, 1) = p[m];
  }
  template <class T>
  static void force(const Vec<T, kN>& q, const Vec<T, kN>&, T, const T* p, Vec<T, kN>& Q) {
    Q[0] = -p[k1] * q[0];
    Q[1] = -p[k2] * q[1];
  }
  template <class S, class T>
  static void position_rows(const Vec<S, kN>&, S, const T*, S*) {}
  template <class S, class T>
  static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}
};

// Planar pendulum, bob (x, y), rod length L from the origin, gravity -y: phi = (x^2+y^2-L^2)/2.
struct CartesianPendulum {
  static constexpr const char* kName = "test_cartesian_pendulum";
  static constexpr int kN = 2;
  static constexpr int kPositionRows = 1;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  enum { m, L, g };
  static constexpr ParamSpec kParams[] = {{"m", 1.5}, {"L", 0.8}, {"g", 9.81}};
  template <class T>
  static void mass(const Vec<T, kN>&, T, const T* p, Mat<T, kN, kN>& M) {
    M = Mat<T, kN, kN>::identity();
    M(0, 0) = p[m];
    M(1, 1) = p[m];
  }
  template <class T>
  static void force(const Vec<T, kN>&, const Vec<T, kN>&, T, const T* p, Vec<T, kN>& Q) {
    Q[0] = T(0);
    Q[1] = -p[m] * p[g];
  }
  template <class S, class T>
  static void position_rows(const Vec<S, kN>& q, S, const T* p, S* phi) {
    phi[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - p[L] * p[L]);
  }
  template <class S, class T>
  static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}
};

// q = (u, z). A parameter-driven model that can be healthy or fail in every way:
//   M = diag(m0 - fade t, 1), Q = (-k u + 2 blow u^3, 0),
//   phi0 = c z, phi1 = c (z - r t^2 - off).
// healthy: u'' = -k u (rows zero when c = 0; duplicated, consistent rows z = 0 when c = 1,
// r = off = 0); blow-up: k = 0, blow = 1, u(0) = 1, u'(0) = 1 gives u = 1 / (1 - t); fading mass:
// fade = 1 makes M singular at t = m0; contradictory rows: c = 1 with r != 0 (z'' = 0 and
// z'' = 2 r) or off != 0 (z = 0 and z = off: contradictory once Baumgarte beta > 0).
struct Switch {
  static constexpr const char* kName = "test_switch";
  static constexpr int kN = 2;
  static constexpr int kPositionRows = 2;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  enum { k, blow, m0, fade, c, r, off };
  static constexpr ParamSpec kParams[] = {{"k", 4.0}, {"blow", 0.0}, {"m0", 1.0}, {"fade", 0.0},
                                          {"c", 0.0}, {"r", 0.0},    {"off", 0.0}};
  template <class T>
  static void mass(const Vec<T, kN>&, T t, const T* p, Mat<T, kN, kN>& M) {
    M = Mat<T, kN, kN>::identity();
    M(0, 0) = p[m0] - p[fade] * t;
  }
  template <class T>
  static void force(const Vec<T, kN>& q, const Vec<T, kN>&, T, const T* p, Vec<T, kN>& Q) {
    Q[0] = -p[k] * q[0] + T(2) * p[blow] * q[0] * q[0] * q[0];
    Q[1] = T(0);
  }
  template <class S, class T>
  static void position_rows(const Vec<S, kN>& q, S t, const T* p, S* phi) {
    phi[0] = p[c] * q[1];
    phi[1] = p[c] * (q[1] - p[r] * t * t - p[off]);
  }
  template <class S, class T>
  static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}
};

// q'' = 1 in one coordinate: q = q0 + v0 t + t^2 / 2, a polynomial both RK4 and DOPRI5 integrate
// exactly, so any sample taken off its time shows as a difference.
struct Parabola {
  static constexpr const char* kName = "test_parabola";
  static constexpr int kN = 1;
  static constexpr int kPositionRows = 0;
  static constexpr int kVelocityRows = 0;
  static constexpr bool kNonIdeal = false;
  static constexpr ParamSpec kParams[] = {{"unused", 0.0}};
  template <class T>
  static void mass(const Vec<T, kN>&, T, const T*, Mat<T, kN, kN>& M) {
    M(0, 0) = T(1);
  }
  template <class T>
  static void force(const Vec<T, kN>&, const Vec<T, kN>&, T, const T*, Vec<T, kN>& Q) {
    Q[0] = T(1);
  }
  template <class S, class T>
  static void position_rows(const Vec<S, kN>&, S, const T*, S*) {}
  template <class S, class T>
  static void velocity_rows(const Vec<S, kN>&, const Vec<S, kN>&, S, const T*, S*) {}
};

// ---------------------------------------------------------------- host harness

template <class Model, class T = double>
struct HostRun {
  static constexpr int n = Model::kN;
  static constexpr int R = kResidualSlots<Model>;
  static constexpr int P = kParamCount<Model>;
  int count;
  int samples = 0;
  std::vector<double> params, q0, qd0;
  std::vector<std::int32_t> status, traj_slot;
  std::vector<double> t, q, qd, residual_max, force_max, control_effort_max, inconsistency_max;
  std::vector<std::int64_t> steps, rejected;
  std::vector<double> traj_q, traj_qd, traj_residual, traj_force, traj_control;

  explicit HostRun(int c) : count(c) {
    params.resize(std::size_t(P) * c);
    q0.assign(std::size_t(n) * c, 0.0);
    qd0.assign(std::size_t(n) * c, 0.0);
    for (int i = 0; i < c; ++i)
      for (int k = 0; k < P; ++k) param(k, i) = Model::kParams[k].value;
  }
  double& param(int k, int i) { return params[std::size_t(k) * count + i]; }
  double& init_q(int j, int i) { return q0[std::size_t(j) * count + i]; }
  double& init_qd(int j, int i) { return qd0[std::size_t(j) * count + i]; }

  // Runs the batch; systems with record[i] get trajectory slot i (all when `record` is empty).
  void run(const RunSettings<T>& s, int threads = 1, std::vector<bool> record = {}) {
    samples = s.samples;
    const auto c = std::size_t(count);
    status.assign(c, -1);
    t.assign(c, 0.0);
    q.assign(c * n, 0.0);
    qd.assign(c * n, 0.0);
    residual_max.assign(c * R, 0.0);
    force_max.assign(c, 0.0);
    control_effort_max.assign(c, 0.0);
    inconsistency_max.assign(c, 0.0);
    steps.assign(c, 0);
    rejected.assign(c, 0);
    traj_slot.assign(c, -1);
    int slots = 0;
    for (int i = 0; i < count; ++i)
      if (record.empty() || record[i]) traj_slot[i] = slots++;
    const std::size_t per = std::size_t(slots) * samples;
    traj_q.assign(per * n, -999.0);
    traj_qd.assign(per * n, -999.0);
    traj_residual.assign(per * R, -999.0);
    traj_force.assign(per * n, -999.0);
    traj_control.assign(per * n, -999.0);
    const BatchInputView in{count, params.data(), q0.data(), qd0.data()};
    BatchOutputView out;
    out.count = count;
    out.status = status.data();
    out.t = t.data();
    out.q = q.data();
    out.qd = qd.data();
    out.residual_max = residual_max.data();
    out.force_max = force_max.data();
    out.control_effort_max = control_effort_max.data();
    out.inconsistency_max = inconsistency_max.data();
    out.steps = steps.data();
    out.rejected = rejected.data();
    out.traj_slot = traj_slot.data();
    out.traj_q = traj_q.data();
    out.traj_qd = traj_qd.data();
    out.traj_residual = traj_residual.data();
    out.traj_force = traj_force.data();
    out.traj_control = traj_control.data();
    run_batch_cpu<Model, T>(in, s, out, threads);
  }
  double fq(int j, int i) const { return q[std::size_t(j) * count + i]; }
  double fqd(int j, int i) const { return qd[std::size_t(j) * count + i]; }
  double res(int r, int i) const { return residual_max[std::size_t(r) * count + i]; }
  std::size_t at(int i, int k) const { return std::size_t(traj_slot[i]) * samples + k; }
  double tq(int i, int k, int j) const { return traj_q[at(i, k) * n + j]; }
  double tqd(int i, int k, int j) const { return traj_qd[at(i, k) * n + j]; }
  double tres(int i, int k, int r) const { return traj_residual[at(i, k) * R + r]; }
  double tforce(int i, int k, int j) const { return traj_force[at(i, k) * n + j]; }
  Status st(int i) const { return static_cast<Status>(status[i]); }
};

template <class T = double>
RunSettings<T> settings(double t_end, int samples, double tol) {
  RunSettings<T> s;
  s.t_end = T(t_end);
  s.samples = samples;
  s.rtol = T(tol);
  s.atol = T(tol);
  return s;
}

double sample_time(double t0, double t_end, int samples, int k) {
  return k == samples - 1 ? t_end : t0 + (t_end - t0) * k / (samples - 1);
}

// ---------------------------------------------------------------- accuracy

// x(t) = x0 cos(w t) + v0 / w sin(w t), w = sqrt(k / m); also with RK4 at a fixed step.
TEST(Engine, OscillatorMatchesClosedForm) {
  HostRun<Oscillator> h(3);
  for (int i = 0; i < 3; ++i) {
    h.init_q(0, i) = 1.0 + i;
    h.init_q(1, i) = -0.5;
    h.init_qd(0, i) = 0.3 * i;
    h.init_qd(1, i) = 1.0;
  }
  h.param(Oscillator::m, 2) = 0.5;
  for (Method method : {Method::kDopri5, Method::kRk4}) {
    RunSettings<double> s = settings(10.0, 41, 1e-11);
    s.method = method;
    s.dt = method == Method::kRk4 ? 1e-3 : 0.0;
    h.run(s);
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(h.st(i), Status::kOk);
      EXPECT_EQ(h.t[i], 10.0);
      const double m = h.param(Oscillator::m, i);
      const double w[2] = {std::sqrt(h.param(Oscillator::k1, i) / m),
                           std::sqrt(h.param(Oscillator::k2, i) / m)};
      for (int k = 0; k < 41; ++k) {
        const double tk = sample_time(0, 10, 41, k);
        for (int j = 0; j < 2; ++j) {
          const double x0 = h.init_q(j, i), v0 = h.init_qd(j, i);
          const double x = x0 * std::cos(w[j] * tk) + v0 / w[j] * std::sin(w[j] * tk);
          const double v = -x0 * w[j] * std::sin(w[j] * tk) + v0 * std::cos(w[j] * tk);
          // RK4 at h = 1e-3 over 10 s: global error ~ (w h)^4 w t / 120 < 1e-9.
          EXPECT_NEAR(h.tq(i, k, j), x, 1e-8) << "system " << i << " t " << tk;
          EXPECT_NEAR(h.tqd(i, k, j), v, 1e-8) << "system " << i << " t " << tk;
          EXPECT_EQ(h.tforce(i, k, j), 0.0);  // no rows, no constraint force
        }
      }
      EXPECT_EQ(h.fq(0, i), h.tq(i, 40, 0));
      EXPECT_EQ(h.fqd(1, i), h.tqd(i, 40, 1));
      if (method == Method::kRk4) {
        EXPECT_EQ(h.steps[i], 10000);
        EXPECT_EQ(h.rejected[i], 0);
      }
    }
  }
}

// Reduced pendulum, integrated independently: classical RK4 written out here, h = 1e-4
// (error ~1e-14 over 3 s).
struct ReducedPendulum {
  double g_over_l, th, thd;
  void advance(double dt) {
    const int n = std::max(1, int(std::ceil(dt / 1e-4)));
    const double h = dt / n;
    for (int i = 0; i < n; ++i) {
      auto acc = [&](double a) { return -g_over_l * std::sin(a); };
      const double k1a = thd, k1b = acc(th);
      const double k2a = thd + 0.5 * h * k1b, k2b = acc(th + 0.5 * h * k1a);
      const double k3a = thd + 0.5 * h * k2b, k3b = acc(th + 0.5 * h * k2a);
      const double k4a = thd + h * k3b, k4b = acc(th + h * k3a);
      th += h / 6 * (k1a + 2 * k2a + 2 * k3a + k4a);
      thd += h / 6 * (k1b + 2 * k2b + 2 * k3b + k4b);
    }
  }
};

TEST(Engine, CartesianPendulumMatchesReducedCoordinates) {
  constexpr int kSystems = 3, kSamples = 31;
  const double th0[kSystems] = {0.3, 1.2, 2.5}, thd0[kSystems] = {0.0, -1.0, 2.0};
  HostRun<CartesianPendulum> h(kSystems);
  const double m = 1.5, L = 0.8, g = 9.81;
  for (int i = 0; i < kSystems; ++i) {
    h.init_q(0, i) = L * std::sin(th0[i]);
    h.init_q(1, i) = -L * std::cos(th0[i]);
    h.init_qd(0, i) = L * thd0[i] * std::cos(th0[i]);
    h.init_qd(1, i) = L * thd0[i] * std::sin(th0[i]);
  }
  RunSettings<double> s = settings(3.0, kSamples, 1e-12);
  h.run(s);
  for (int i = 0; i < kSystems; ++i) {
    SCOPED_TRACE(i);
    ASSERT_EQ(h.st(i), Status::kOk);
    ReducedPendulum ref{g / L, th0[i], thd0[i]};
    double t_prev = 0.0;
    for (int k = 0; k < kSamples; ++k) {
      const double tk = sample_time(0, 3, kSamples, k);
      ref.advance(tk - t_prev);
      t_prev = tk;
      const double x = L * std::sin(ref.th), y = -L * std::cos(ref.th);
      // Measured worst: 1.3e-10 (q), 5.9e-10 (qd), 1.0e-9 (force, relative), 1.4e-12 (residuals).
      EXPECT_NEAR(h.tq(i, k, 0), x, 1e-9) << "t " << tk;
      EXPECT_NEAR(h.tq(i, k, 1), y, 1e-9) << "t " << tk;
      EXPECT_NEAR(h.tqd(i, k, 0), L * ref.thd * std::cos(ref.th), 5e-9) << "t " << tk;
      EXPECT_NEAR(h.tqd(i, k, 1), L * ref.thd * std::sin(ref.th), 5e-9) << "t " << tk;
      // Rod tension T = m L thd^2 + m g cos th, pulling the bob toward the pivot.
      const double T = m * L * ref.thd * ref.thd + m * g * std::cos(ref.th);
      EXPECT_NEAR(h.tforce(i, k, 0), -T * std::sin(ref.th), 1e-8 * (1 + std::abs(T)));
      EXPECT_NEAR(h.tforce(i, k, 1), T * std::cos(ref.th), 1e-8 * (1 + std::abs(T)));
      // Residual slots: phi and phid, signed, at this sample.
      EXPECT_LT(std::abs(h.tres(i, k, 0)), 1e-10);
      EXPECT_LT(std::abs(h.tres(i, k, 1)), 1e-10);
    }
    EXPECT_LT(h.res(0, i), 1e-10);
    EXPECT_LT(h.res(1, i), 1e-10);
    EXPECT_LT(h.inconsistency_max[i], 1e-12);
    // force_max is the maximum over accepted states: at least every sampled |Qc|.
    double sampled_max = 0.0;
    for (int k = 0; k < kSamples; ++k)
      sampled_max = std::max(sampled_max, std::hypot(h.tforce(i, k, 0), h.tforce(i, k, 1)));
    EXPECT_GE(h.force_max[i], sampled_max);
    EXPECT_LT(h.force_max[i], 1.1 * sampled_max + 1.0);
  }
}

// Per-step projection keeps |phi| and |phid| at round-off even with a loose tolerance.
TEST(Engine, ProjectionKeepsResidualsAtRoundOff) {
  HostRun<CartesianPendulum> h(1);
  const double L = 0.8;
  h.init_q(0, 0) = L;
  h.init_qd(1, 0) = 2.0;
  RunSettings<double> s = settings(3.0, 11, 1e-6);
  h.run(s);
  ASSERT_EQ(h.st(0), Status::kOk);
  const double drift = h.res(0, 0);
  EXPECT_GT(drift, 1e-9);  // without projection a loose tolerance lets phi drift
  s.projection = true;
  h.run(s);
  ASSERT_EQ(h.st(0), Status::kOk);
  EXPECT_LT(h.res(0, 0), 1e-12);
  EXPECT_LT(h.res(1, 0), 1e-12);
}

// assemble = true projects an inconsistent initial condition before integrating: for the
// pendulum (isotropic M) the M-weighted least change is the radial projection of the position
// and the removal of the velocity's radial part; sample 0 is that state, with |phi|, |phid| at
// round-off.
TEST(Engine, AssembleProjectsInitialCondition) {
  HostRun<CartesianPendulum> h(2);
  const double L = 0.8, th = 0.7;
  for (int i = 0; i < 2; ++i) {
    const double scale = i == 0 ? 1.25 : 0.9;
    h.init_q(0, i) = scale * L * std::sin(th);
    h.init_q(1, i) = -scale * L * std::cos(th);
    h.init_qd(0, i) = 0.5;
    h.init_qd(1, i) = 0.9;
  }
  RunSettings<double> s = settings(1.0, 3, 1e-10);
  s.assemble = true;
  h.run(s);
  const double er[2] = {std::sin(th), -std::cos(th)};
  const double radial = 0.5 * er[0] + 0.9 * er[1];
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(h.st(i), Status::kOk);
    EXPECT_NEAR(h.tq(i, 0, 0), L * er[0], 1e-12);
    EXPECT_NEAR(h.tq(i, 0, 1), L * er[1], 1e-12);
    EXPECT_NEAR(h.tqd(i, 0, 0), 0.5 - radial * er[0], 1e-12);
    EXPECT_NEAR(h.tqd(i, 0, 1), 0.9 - radial * er[1], 1e-12);
    EXPECT_LT(std::abs(h.tres(i, 0, 0)), 1e-12);
    EXPECT_LT(std::abs(h.tres(i, 0, 1)), 1e-12);
    EXPECT_LT(h.res(0, i), 1e-9);
  }
  // Without assembly the initial residual is reported as it is.
  s.assemble = false;
  h.run(s);
  EXPECT_NEAR(h.tres(0, 0, 0), 0.5 * (1.25 * 1.25 - 1) * L * L, 1e-15);
  EXPECT_GE(h.res(0, 0), 0.5 * (1.25 * 1.25 - 1) * L * L);
}

// DOPRI5's error control: the global error on a known solution stays within a small multiple of
// the requested tolerance (local control, ~15 periods of the fast coordinate), and falls with it.
TEST(Engine, AdaptiveControlMeetsTolerance) {
  HostRun<Oscillator> h(1);
  h.init_q(0, 0) = 1.0;
  h.init_q(1, 0) = 0.5;
  h.init_qd(1, 0) = -0.25;
  double prev_err = 1.0;
  std::int64_t prev_steps = 0;
  for (double tol : {1e-5, 1e-7, 1e-9, 1e-11}) {
    SCOPED_TRACE(tol);
    h.run(settings(20.0, 101, tol));
    ASSERT_EQ(h.st(0), Status::kOk);
    double err = 0.0;
    const double w[2] = {2.0, 0.5};  // sqrt(8 / 2), sqrt(0.5 / 2)
    for (int k = 0; k < 101; ++k) {
      const double tk = sample_time(0, 20, 101, k);
      for (int j = 0; j < 2; ++j) {
        const double x0 = h.init_q(j, 0), v0 = h.init_qd(j, 0);
        const double x = x0 * std::cos(w[j] * tk) + v0 / w[j] * std::sin(w[j] * tk);
        err = std::max(err, std::abs(h.tq(0, k, j) - x));
      }
    }
    // Solution scale is 1: the requested accuracy is tol absolute; allow 50x for the
    // accumulation of local errors over the run (measured 11x-17x for tol = 1e-5 .. 1e-11).
    EXPECT_LT(err, 50 * tol);
    EXPECT_LT(err, prev_err);
    EXPECT_GT(h.steps[0], prev_steps);
    prev_err = err;
    prev_steps = h.steps[0];
  }
}

// Baumgarte stabilization through the engine: rows z = 0 (twice, c = 1) from z(0) = z0,
// z'(0) = v0 with gains alpha = 2 w, beta = w^2 make z'' + alpha z' + beta z = 0, critically
// damped: z = (z0 + (v0 + w z0) t) e^{-w t}. The unconstrained coordinate is unaffected.
TEST(Engine, BaumgarteResidualDynamics) {
  HostRun<Switch> h(1);
  h.param(Switch::c, 0) = 1.0;
  const double z0 = 0.3, v0 = -0.4, w = 3.0;
  h.init_q(0, 0) = 1.0;
  h.init_q(1, 0) = z0;
  h.init_qd(1, 0) = v0;
  RunSettings<double> s = settings(2.0, 21, 1e-12);
  s.dynamics.alpha = 2 * w;
  s.dynamics.beta = w * w;
  h.run(s);
  ASSERT_EQ(h.st(0), Status::kOk);
  for (int k = 0; k < 21; ++k) {
    const double tk = sample_time(0, 2, 21, k);
    const double z = (z0 + (v0 + w * z0) * tk) * std::exp(-w * tk);
    EXPECT_NEAR(h.tq(0, k, 1), z, 1e-10) << tk;
    EXPECT_NEAR(h.tres(0, k, 0), z, 1e-10) << "phi0 = z";
    EXPECT_NEAR(h.tq(0, k, 0), std::cos(2.0 * tk), 1e-9) << "u = cos(2 t)";
  }
  EXPECT_NEAR(h.res(0, 0), z0, 1e-15);  // |phi| is largest at t = 0 here (z decays from z0)
  EXPECT_LT(h.inconsistency_max[0], 1e-13);
}

// ---------------------------------------------------------------- sample times

// Steps end exactly on the K sample times: q = t^2 / 2 (exact for both methods) must match at
// every sample to round-off, for sample spacings the steps do not divide, and t = t_end exactly.
TEST(Engine, StepsLandExactlyOnSampleTimes) {
  for (Method method : {Method::kDopri5, Method::kRk4}) {
    for (int samples : {2, 7, 13}) {
      HostRun<Parabola> h(1);
      RunSettings<double> s = settings(2.9, samples, 1e-9);
      s.t0 = 0.3;
      s.method = method;
      s.dt = method == Method::kRk4 ? 0.07 : 0.0;
      h.run(s);
      ASSERT_EQ(h.st(0), Status::kOk);
      EXPECT_EQ(h.t[0], 2.9);
      for (int k = 0; k < samples; ++k) {
        const double tk = sample_time(0.3, 2.9, samples, k);
        const double expected = 0.5 * (tk - 0.3) * (tk - 0.3);  // q(t0) = 0, qd(t0) = 0
        EXPECT_NEAR(h.tq(0, k, 0), expected, 1e-14) << "sample " << k;
        EXPECT_NEAR(h.tqd(0, k, 0), tk - 0.3, 1e-14) << "sample " << k;
      }
      EXPECT_EQ(h.tq(0, samples - 1, 0), h.fq(0, 0));
    }
  }
}

// ---------------------------------------------------------------- failure statuses

TEST(Engine, MaxStepsStatus) {
  HostRun<Oscillator> h(2);
  h.init_q(0, 0) = h.init_q(0, 1) = 1.0;
  RunSettings<double> s = settings(10.0, 5, 1e-10);
  s.max_steps = 7;
  h.run(s);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(h.st(i), Status::kMaxSteps);
    EXPECT_EQ(h.steps[i] + h.rejected[i], 7);
    EXPECT_LT(h.t[i], 10.0);
    // Samples never reached are NaN.
    EXPECT_TRUE(std::isnan(h.tq(i, 4, 0)));
    EXPECT_TRUE(std::isnan(h.tforce(i, 4, 1)));
  }
  s.method = Method::kRk4;
  s.dt = 0.01;
  h.run(s);
  EXPECT_EQ(h.st(0), Status::kMaxSteps);
  EXPECT_EQ(h.steps[0], 7);
  EXPECT_NEAR(h.t[0], 0.07, 1e-15);
}

// u'' = 2 u^3, u(0) = 1, u'(0) = 1: u = 1 / (1 - t) blows up at t = 1; asked to run to t = 2.
TEST(Engine, FiniteTimeBlowUpStops) {
  HostRun<Switch> h(1);
  h.param(Switch::k, 0) = 0.0;
  h.param(Switch::blow, 0) = 1.0;
  h.init_q(0, 0) = 1.0;
  h.init_qd(0, 0) = 1.0;
  h.run(settings(2.0, 5, 1e-9));
  const Status st = h.st(0);
  EXPECT_TRUE(st == Status::kStepUnderflow || st == Status::kNonfinite) << status_name(st);
  EXPECT_LE(h.t[0], 1.0);
  EXPECT_GT(h.t[0], 0.99);
  // Sample 2 (t = 1) and later were never reached.
  EXPECT_FALSE(std::isnan(h.tq(0, 1, 0)));
  EXPECT_NEAR(h.tq(0, 1, 0), 2.0, 1e-7);  // u(0.5) = 2
  EXPECT_TRUE(std::isnan(h.tq(0, 2, 0)));
  EXPECT_TRUE(std::isnan(h.tq(0, 4, 0)));

  RunSettings<double> s = settings(2.0, 5, 0.0);
  s.method = Method::kRk4;
  s.dt = 0.01;
  h.run(s);
  EXPECT_EQ(h.st(0), Status::kNonfinite);
  EXPECT_LT(h.t[0], 2.0);
}

// M = diag(m0 - fade t, 1) stops being positive definite at t = m0 / fade = 1. With k = 0 the
// force is 0, so the acceleration stays 0 (finite) while M shrinks to 0: nothing but the mass
// matrix stops the run, and the status must name it. With k > 0 the acceleration -k u / M blows
// up as M -> 0+, which an adaptive integrator sees as a singularity it cannot step past.
TEST(Engine, SingularMassStatusRk4) {
  for (double k : {0.0, 4.0}) {
    SCOPED_TRACE(k);
    HostRun<Switch> h(1);
    h.param(Switch::fade, 0) = 1.0;
    h.param(Switch::k, 0) = k;
    h.init_q(0, 0) = 1.0;
    h.init_qd(0, 0) = 0.5;
    RunSettings<double> s = settings(2.0, 5, 0.0);
    s.method = Method::kRk4;
    s.dt = 0.01;
    h.run(s);
    EXPECT_EQ(h.st(0), Status::kSingularMass);
    EXPECT_LE(h.t[0], 1.0 + 1e-12);
    EXPECT_GE(h.t[0], 0.98);
  }
}

TEST(Engine, SingularMassStatusDopri5) {
  HostRun<Switch> h(1);
  h.param(Switch::fade, 0) = 1.0;
  h.param(Switch::k, 0) = 0.0;
  h.init_q(0, 0) = 1.0;
  h.init_qd(0, 0) = 0.5;
  h.run(settings(2.0, 5, 1e-9));
  EXPECT_EQ(h.st(0), Status::kSingularMass);
  EXPECT_LE(h.t[0], 1.0);
  EXPECT_GT(h.t[0], 0.99);
  EXPECT_NEAR(h.fq(0, 0), 1.0 + 0.5 * h.t[0], 1e-12);  // u = 1 + t / 2 up to where it stopped
}

TEST(Engine, SingularMassApproachStopsDopri5) {
  // k = 4: the acceleration diverges as M -> 0+; the run must stop short of t = 1 with a failure
  // status (which one is the engine's call: the mass is still positive definite when it stops).
  HostRun<Switch> h(1);
  h.param(Switch::fade, 0) = 1.0;
  h.init_q(0, 0) = 1.0;
  h.run(settings(2.0, 5, 1e-9));
  EXPECT_NE(h.st(0), Status::kOk);
  EXPECT_LE(h.t[0], 1.0);
  EXPECT_GT(h.t[0], 0.99);
}

TEST(Engine, InitiallySingularMassStatus) {
  for (Method method : {Method::kDopri5, Method::kRk4}) {
    HostRun<Switch> h(1);
    h.param(Switch::m0, 0) = -1.0;
    RunSettings<double> s = settings(1.0, 3, 1e-9);
    s.method = method;
    s.dt = 0.01;
    h.run(s);
    EXPECT_EQ(h.st(0), Status::kSingularMass) << status_name(h.st(0));
    EXPECT_EQ(h.t[0], 0.0);
    EXPECT_EQ(h.steps[0], 0);
  }
}

// Rows z = 0 and z = t^2 agree at t = 0 in value and rate but demand z'' = 0 and z'' = 2: with
// Baumgarte off no acceleration satisfies A qdd = b, and the run must say so.
TEST(Engine, InconsistentAccelerationRows) {
  for (Method method : {Method::kDopri5, Method::kRk4}) {
    HostRun<Switch> h(1);
    h.param(Switch::c, 0) = 1.0;
    h.param(Switch::r, 0) = 1.0;
    RunSettings<double> s = settings(1.0, 3, 1e-9);
    s.method = method;
    s.dt = 0.01;
    h.run(s);
    EXPECT_EQ(h.st(0), Status::kInconsistent) << status_name(h.st(0));
    EXPECT_NEAR(h.inconsistency_max[0], std::sqrt(2.0), 1e-12);  // |[0, 2] - [1, 1]| at z'' = 1
    EXPECT_EQ(h.t[0], 0.0);
  }
}

// Rows z = 0 and z = 1: consistent at acceleration level with Baumgarte off (both demand
// z'' = 0; the run goes on with |phi| = 1/2 reported for each row), contradictory with beta > 0,
// and impossible to assemble.
TEST(Engine, ContradictoryPositionRows) {
  HostRun<Switch> h(1);
  h.param(Switch::c, 0) = 1.0;
  h.param(Switch::off, 0) = 1.0;
  h.init_q(1, 0) = 0.5;
  RunSettings<double> s = settings(1.0, 3, 1e-9);
  h.run(s);
  EXPECT_EQ(h.st(0), Status::kOk);
  EXPECT_NEAR(h.res(0, 0), 0.5, 1e-12);  // |phi0| = |z|
  EXPECT_NEAR(h.res(1, 0), 0.5, 1e-12);  // |phi1| = |z - 1|

  s.dynamics.beta = 4.0;
  h.run(s);
  EXPECT_EQ(h.st(0), Status::kInconsistent) << status_name(h.st(0));

  s.dynamics.beta = 0.0;
  s.assemble = true;
  h.run(s);
  EXPECT_EQ(h.st(0), Status::kInconsistent) << status_name(h.st(0));
  EXPECT_EQ(h.steps[0], 0);
}

// Duplicated consistent rows (z = 0 twice) are not a failure.
TEST(Engine, RedundantRowsAreFine) {
  HostRun<Switch> h(1);
  h.param(Switch::c, 0) = 1.0;
  h.init_q(0, 0) = 1.0;
  h.run(settings(2.0, 5, 1e-10));
  EXPECT_EQ(h.st(0), Status::kOk);
  EXPECT_LT(h.inconsistency_max[0], 1e-14);
  EXPECT_NEAR(h.fq(0, 0), std::cos(2.0 * 2.0), 1e-8);  // u = cos(2 t)
}

// ---------------------------------------------------------------- isolation

template <class Model, class T>
void expect_same_system(const HostRun<Model, T>& a, int ia, const HostRun<Model, T>& b, int ib) {
  constexpr int n = Model::kN, R = kResidualSlots<Model>;
  EXPECT_EQ(a.status[ia], b.status[ib]);
  EXPECT_EQ(std::memcmp(&a.t[ia], &b.t[ib], sizeof(double)), 0);
  for (int j = 0; j < n; ++j) {
    EXPECT_EQ(a.fq(j, ia), b.fq(j, ib));
    EXPECT_EQ(a.fqd(j, ia), b.fqd(j, ib));
  }
  for (int r = 0; r < R; ++r) EXPECT_EQ(a.res(r, ia), b.res(r, ib));
  EXPECT_EQ(a.force_max[ia], b.force_max[ib]);
  EXPECT_EQ(a.inconsistency_max[ia], b.inconsistency_max[ib]);
  EXPECT_EQ(a.steps[ia], b.steps[ib]);
  EXPECT_EQ(a.rejected[ia], b.rejected[ib]);
  if (a.traj_slot[ia] >= 0 && b.traj_slot[ib] >= 0) {
    for (int k = 0; k < a.samples; ++k) {
      for (int j = 0; j < n; ++j) {
        EXPECT_EQ(a.tq(ia, k, j), b.tq(ib, k, j));
        EXPECT_EQ(a.tqd(ia, k, j), b.tqd(ib, k, j));
        EXPECT_EQ(a.tforce(ia, k, j), b.tforce(ib, k, j));
      }
      for (int r = 0; r < R; ++r) EXPECT_EQ(a.tres(ia, k, r), b.tres(ib, k, r));
    }
  }
}

// A batch mixing healthy systems with every kind of failure, against the healthy systems alone:
// bit-identical results, whatever the thread count and whichever systems record trajectories.
template <class T>
void isolation_suite() {
  constexpr int kKinds = 6, kCount = 60;
  auto configure = [](HostRun<Switch, T>& h, int i, int kind, int variant) {
    h.init_q(0, i) = 1.0 + 0.01 * variant;
    h.init_qd(0, i) = 0.1 * variant;
    h.param(Switch::k, i) = 4.0 + 0.1 * variant;
    switch (kind) {
      case 0:  // healthy, no rows active
        break;
      case 1:  // healthy with duplicated consistent rows
        h.param(Switch::c, i) = 1.0;
        break;
      case 2:  // blow-up
        h.param(Switch::k, i) = 0.0;
        h.param(Switch::blow, i) = 1.0;
        h.init_qd(0, i) = 1.0 + 0.01 * variant;
        break;
      case 3:  // fading mass
        h.param(Switch::fade, i) = 1.0;
        break;
      case 4:  // contradictory rows
        h.param(Switch::c, i) = 1.0;
        h.param(Switch::r, i) = 1.0;
        break;
      case 5:  // initially singular mass
        h.param(Switch::m0, i) = -1.0;
        break;
    }
  };
  HostRun<Switch, T> mixed(kCount);
  std::vector<int> healthy_ids;
  for (int i = 0; i < kCount; ++i) {
    const int kind = (i * 7) % kKinds;
    configure(mixed, i, kind, i);
    if (kind <= 1) healthy_ids.push_back(i);
  }
  HostRun<Switch, T> healthy(int(healthy_ids.size()));
  for (std::size_t h = 0; h < healthy_ids.size(); ++h) {
    const int i = healthy_ids[h];
    configure(healthy, int(h), (i * 7) % kKinds, i);
  }
  RunSettings<T> s = settings<T>(2.0, 9, sizeof(T) == 8 ? 1e-10 : 1e-5);
  healthy.run(s, 1);
  for (int i = 0; i < int(healthy_ids.size()); ++i) ASSERT_EQ(healthy.st(i), Status::kOk) << i;
  for (int threads : {1, 3}) {
    // Record only every other system in the mixed batch: recording must not change results.
    std::vector<bool> record(kCount);
    for (int i = 0; i < kCount; ++i) record[i] = i % 2 == 0;
    mixed.run(s, threads, record);
    int failed = 0;
    for (int i = 0; i < kCount; ++i) failed += mixed.st(i) != Status::kOk;
    EXPECT_EQ(failed, kCount - int(healthy_ids.size()));
    for (std::size_t h = 0; h < healthy_ids.size(); ++h) {
      SCOPED_TRACE("system " + std::to_string(healthy_ids[h]));
      expect_same_system(mixed, healthy_ids[h], healthy, int(h));
    }
  }
}

TEST(Engine, FailingSystemsDoNotDisturbOthersDouble) { isolation_suite<double>(); }
TEST(Engine, FailingSystemsDoNotDisturbOthersFloat) { isolation_suite<float>(); }

}  // namespace
}  // namespace ukes
