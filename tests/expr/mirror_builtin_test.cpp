// A definition written operation for operation like C++ written by hand (scara's functions as
// kernels/models/scara.hpp had them before the built-in was generated from its definition) gives
// the C++'s numbers to the bit: the compiler neither reorders nor re-associates, and
// folds only what C++ would fold.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <iterator>
#include <vector>

#include "kernels/autodiff/jet.hpp"
#include "kernels/models/scara.hpp"
#include "tests/expr/expr_support.hpp"

namespace ukes::testing {
namespace {

using models::Scara;  // the built-in's metadata: parameters, gains, end time

// scara's mass matrix, force, rows and initial state written by hand.
struct HandWrittenScara {
  static constexpr int kN = 4;
  enum Param {
    m1,
    m2,
    m3,
    m4,
    l0,
    l1,
    l2,
    r1,
    r2,
    Iz1,
    Iz2,
    Iz3,
    Iz4,
    g,
    xc,
    yc,
    R,
    Omega,
    vz,
    psi0
  };

  template <class T>
  UKES_HD static void mass(const Vec<T, kN>& q, T, const T* p, Mat<T, kN, kN>& M) {
    const T al = p[Iz1] + p[r1] * p[r1] * p[m1] + p[l1] * p[l1] * (p[m2] + p[m3] + p[m4]);
    const T be = p[Iz2] + p[Iz3] + p[Iz4] + p[l2] * p[l2] * (p[m3] + p[m4]) + p[m2] * p[r2] * p[r2];
    const T ga = p[l1] * p[l2] * (p[m3] + p[m4]) + p[l1] * p[m2] * p[r2];
    const T de = p[Iz3] + p[Iz4];
    const T c2 = cos(q[1]);
    M = Mat<T, kN, kN>::zero();
    M(0, 0) = al + be + T(2) * ga * c2;
    M(0, 1) = be + ga * c2;
    M(1, 0) = M(0, 1);
    M(1, 1) = be;
    M(0, 2) = de;
    M(2, 0) = de;
    M(1, 2) = de;
    M(2, 1) = de;
    M(2, 2) = de;
    M(3, 3) = p[m4];
  }

  // Q = -C qd - G, no motor torques: the trajectory is enforced by the constraint forces alone.
  template <class T>
  UKES_HD static void force(const Vec<T, kN>& q, const Vec<T, kN>& qd, T, const T* p,
                            Vec<T, kN>& Q) {
    const T ga = p[l1] * p[l2] * (p[m3] + p[m4]) + p[l1] * p[m2] * p[r2];
    const T s2 = sin(q[1]);
    Q[0] = ga * s2 * qd[1] * (T(2) * qd[0] + qd[1]);
    Q[1] = -ga * s2 * qd[0] * qd[0];
    Q[2] = T(0);
    Q[3] = -p[m4] * p[g];
  }

  // Tool position on the circle of the helix, tool orientation and height.
  template <class S, class T>
  UKES_HD static void position_rows(const Vec<S, kN>& q, S t, const T* p, S* phi) {
    const S q12 = q[0] + q[1];
    const S wt = p[Omega] * t;
    phi[0] = -p[l1] * sin(q[0]) - p[l2] * sin(q12) - p[xc] - p[R] * sin(wt);
    phi[1] = p[l1] * cos(q[0]) + p[l2] * cos(q12) - p[yc] - p[R] * cos(wt);
    phi[2] = q12 + q[2] - p[psi0];
    phi[3] = q[3] + p[l0] - p[vz] * t;
  }

  // The paper's initial condition, (30, 55, 24 degrees, 0): off the constraint set on purpose.
  template <class T>
  UKES_HD static void initial_state(const T*, Vec<T, kN>& q, Vec<T, kN>& qd) {
    constexpr double kDeg = 3.14159265358979323846 / 180.0;
    q[0] = T(30.0 * kDeg);
    q[1] = T(55.0 * kDeg);
    q[2] = T(24.0 * kDeg);
    q[3] = T(0);
    qd[0] = T(-0.157);
    qd[1] = T(0.0001);
    qd[2] = T(0.157);
    qd[3] = T(0.0195);
  }
};

// HandWrittenScara as a definition; intermediates stand for its local variables.
constexpr const char* kScara = R"json({
  "name": "scara_mirror", "coordinates": ["q1", "q2", "q3", "q4"],
  "parameters": [
    {"name": "m1", "value": 20.0}, {"name": "m2", "value": 15.0}, {"name": "m3", "value": 15.0},
    {"name": "m4", "value": 0.5}, {"name": "l0", "value": 0.0}, {"name": "l1", "value": 0.2},
    {"name": "l2", "value": 0.25}, {"name": "r1", "value": 0.1}, {"name": "r2", "value": 0.125},
    {"name": "Iz1", "value": 0.27}, {"name": "Iz2", "value": 0.31}, {"name": "Iz3", "value": 0.02},
    {"name": "Iz4", "value": 0.0001}, {"name": "g", "value": 9.81}, {"name": "xc", "value": 0.0},
    {"name": "yc", "value": 0.35}, {"name": "R", "value": 0.05},
    {"name": "Omega", "value": 1.2566370614359172}, {"name": "vz", "value": 0.02},
    {"name": "psi0", "value": 0.0}],
  "intermediates": [
    {"name": "al", "expr": "Iz1 + r1 * r1 * m1 + l1 * l1 * (m2 + m3 + m4)"},
    {"name": "be", "expr": "Iz2 + Iz3 + Iz4 + l2 * l2 * (m3 + m4) + m2 * r2 * r2"},
    {"name": "ga", "expr": "l1 * l2 * (m3 + m4) + l1 * m2 * r2"},
    {"name": "de", "expr": "Iz3 + Iz4"},
    {"name": "c2", "expr": "cos(q2)"},
    {"name": "s2", "expr": "sin(q2)"},
    {"name": "q12", "expr": "q1 + q2"},
    {"name": "wt", "expr": "Omega * t"}],
  "mass": {"upper": [["al + be + 2 * ga * c2", "be + ga * c2", "de", 0], ["be", "de", 0],
                     ["de", 0], ["m4"]]},
  "force": ["ga * s2 * q2_dot * (2 * q1_dot + q2_dot)", "-ga * s2 * q1_dot * q1_dot", 0,
            "-m4 * g"],
  "position_constraints": [
    "-l1 * sin(q1) - l2 * sin(q12) - xc - R * sin(wt)",
    "l1 * cos(q1) + l2 * cos(q12) - yc - R * cos(wt)",
    "q12 + q3 - psi0",
    "q4 + l0 - vz * t"],
  "initial_state": {"q": [0.5235987755982988, 0.9599310885968813, 0.4188790204786391, 0],
                    "qd": [-0.157, 0.0001, 0.157, 0.0195]},
  "t_end": 10.0, "baumgarte": {"alpha": 30.0, "beta": 225.0}})json";

template <class T>
std::vector<T> parameters() {
  std::vector<T> p;
  for (const ParamSpec& spec : Scara::kParams) p.push_back(T(spec.value));
  return p;
}

template <class T>
void expect_bitwise(T got, T expected, const char* what, int k) {
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  EXPECT_EQ(std::bit_cast<Bits>(got), std::bit_cast<Bits>(expected))
      << what << "[" << k << "]: " << got << " vs " << expected;
}

template <class T>
void expect_same_numbers() {
  const UserModelDefinition d = parse_user_model_text(kScara);
  const std::vector<T> p = parameters<T>();
  const double states[][9] = {{0.3, -0.7, 1.1, 0.2, 0.5, -0.2, 0.9, -1.3, 0.37},
                              {0.52, 0.96, 0.42, 0.0, -0.157, 0.0001, 0.157, 0.0195, 0.0},
                              {-2.1, 3.0, -0.4, 1.7, 2.2, -1.9, 0.05, 0.8, 7.5}};
  for (const auto& s : states) {
    Vec<T, 4> q, qd;
    for (int j = 0; j < 4; ++j) q[j] = T(s[j]), qd[j] = T(s[4 + j]);
    const T t = T(s[8]);
    Mat<T, 4, 4> M;
    Vec<T, 4> Q;
    T phi[4];
    HandWrittenScara::mass(q, t, p.data(), M);
    HandWrittenScara::force(q, qd, t, p.data(), Q);
    HandWrittenScara::position_rows(q, t, p.data(), phi);
    const auto mass =
        run<T, T>(d, expr::Segment::kMass, {&q[0], nullptr, t, p.data()}, 4 * expr::kMassStride);
    const auto force = run<T, T>(d, expr::Segment::kForce, {&q[0], &qd[0], t, p.data()}, 4);
    const auto rows = run<T, T>(d, expr::Segment::kPositionRows, {&q[0], nullptr, t, p.data()}, 4);
    for (int k = 0; k < 16; ++k)
      expect_bitwise(mass[(k / 4) * expr::kMassStride + k % 4], M.a[k], "M", k);
    for (int k = 0; k < 4; ++k) expect_bitwise(force[k], Q[k], "Q", k);
    for (int k = 0; k < 4; ++k) expect_bitwise(rows[k], phi[k], "phi", k);
  }
}

TEST(MirrorBuiltin, ScaraDouble) { expect_same_numbers<double>(); }
TEST(MirrorBuiltin, ScaraFloat) { expect_same_numbers<float>(); }

// The rows as jets: the same values, rates, curvatures and gradients.
TEST(MirrorBuiltin, ScaraRowsAsJets) {
  using J = Jet<double, 4>;
  const UserModelDefinition d = parse_user_model_text(kScara);
  const std::vector<double> p = parameters<double>();
  Vec<J, 4> q;
  const double q0[] = {0.3, -0.7, 1.1, 0.2}, v[] = {0.5, -0.2, 0.9, -1.3},
               w[] = {0.1, 0.4, -0.3, 0};
  for (int j = 0; j < 4; ++j) q[j] = J::variable(q0[j], j, v[j], w[j]);
  const J t(0.37, 1.0, 0.0);
  J phi[4];
  HandWrittenScara::position_rows(q, t, p.data(), phi);
  const auto rows =
      run<J, double>(d, expr::Segment::kPositionRows, {&q[0], nullptr, t, p.data()}, 4);
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE(r);
    EXPECT_EQ(rows[r].c0, phi[r].c0);
    EXPECT_EQ(rows[r].c1, phi[r].c1);
    EXPECT_EQ(rows[r].c2, phi[r].c2);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(rows[r].gradient(k), phi[r].gradient(k));
  }
}

// The initial state and metadata come through as the built-in's.
TEST(MirrorBuiltin, ScaraDefaults) {
  const UserModelDefinition d = parse_user_model_text(kScara);
  const std::vector<double> p = parameters<double>();
  Vec<double, 4> q, qd;
  HandWrittenScara::initial_state(p.data(), q, qd);
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(d.q0[j], q[j]);
    EXPECT_EQ(d.qd0[j], qd[j]);
  }
  EXPECT_EQ(d.gains.alpha, Scara::kGains.alpha);
  EXPECT_EQ(d.gains.beta, Scara::kGains.beta);
  EXPECT_EQ(d.t_end, Scara::kTEnd);
  EXPECT_EQ(d.position_rows, Scara::kPositionRows);
  ASSERT_EQ(d.parameters.size(), std::size(Scara::kParams));
  for (std::size_t k = 0; k < d.parameters.size(); ++k)
    EXPECT_EQ(d.parameters[k].name, Scara::kParams[k].name);
}

}  // namespace
}  // namespace ukes::testing
