// The second-order constraint form A qdd = b derived by automatic differentiation
// (kernels/uk/constraint_form.hpp), checked against finite differences of each model's own
// constraint functions evaluated in plain double:
//   position rows: A = d phi / dq, b = -(d^2/ds^2) phi(q + s qd, t + s) at s = 0,
//                  value = phi, rate = (d/ds) phi(q + s qd, t + s);
//   velocity rows: A = d psi / dqd, b = -(d/ds) psi(q + s qd, qd, t + s), value = psi, rate = 0.
// Every catalogue model (default parameters, random states and times) and test-only models with
// closed forms. Finite differences are central with one Richardson step (truncation O(h^4)),
// h = 1e-3 relative: errors ~1e-10, checked at 1e-6 relative to 1 + the row's scale.
#include "kernels/uk/constraint_form.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>
#include <string>

#include "kernels/models/catalogue.hpp"

namespace ukes {
namespace {

constexpr double kFdTol = 1e-6;

// Richardson-extrapolated central differences of a scalar function g(s) at 0.
template <class G>
double d1(G&& g, double h) {
  auto c = [&](double k) { return (g(k) - g(-k)) / (2 * k); };
  return (4 * c(h / 2) - c(h)) / 3;
}
template <class G>
double d2(G&& g, double h) {
  const double g0 = g(0.0);
  auto c = [&](double k) { return (g(k) - 2 * g0 + g(-k)) / (k * k); };
  return (4 * c(h / 2) - c(h)) / 3;
}

template <class Model>
using QVec = Vec<double, Model::kN>;

template <class Model>
std::array<double, (Model::kPositionRows > 0 ? Model::kPositionRows : 1)> phi_of(
    const QVec<Model>& q, double t, const double* p) {
  std::array<double, (Model::kPositionRows > 0 ? Model::kPositionRows : 1)> out{};
  if constexpr (Model::kPositionRows > 0) Model::position_rows(q, t, p, out.data());
  return out;
}

template <class Model>
std::array<double, (Model::kVelocityRows > 0 ? Model::kVelocityRows : 1)> psi_of(
    const QVec<Model>& q, const QVec<Model>& qd, double t, const double* p) {
  std::array<double, (Model::kVelocityRows > 0 ? Model::kVelocityRows : 1)> out{};
  if constexpr (Model::kVelocityRows > 0) Model::velocity_rows(q, qd, t, p, out.data());
  return out;
}

std::string sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

struct FdStats {
  double worst = 0.0;  // worst |ad - fd| / (1 + scale) seen
};

void expect_fd(double ad, double fd, double scale, const std::string& what, FdStats& st) {
  const double err = std::abs(ad - fd) / (1.0 + scale);
  st.worst = std::max(st.worst, err);
  EXPECT_LE(err, kFdTol) << what << ": AD " << ad << " vs FD " << fd;
}

// All rows of one model at one state against finite differences.
template <class Model>
void check_form_at(const QVec<Model>& q, const QVec<Model>& qd, double t, const double* p,
                   FdStats& st) {
  constexpr int n = Model::kN, mp = Model::kPositionRows, mv = Model::kVelocityRows;
  const ConstraintForm<Model, double> f = constraint_form<Model, double>(Model{}, q, qd, t, p);
  const double hq = 1e-3;

  for (int r = 0; r < mp; ++r) {
    const std::string row = std::string(Model::kName) + " position row " + std::to_string(r);
    double scale = 0.0;
    for (int j = 0; j < n; ++j) {
      auto g = [&](double s) {
        QVec<Model> qs = q;
        qs[j] += s;
        return phi_of<Model>(qs, t, p)[r];
      };
      const double h = hq * std::max(1.0, std::abs(q[j]));
      const double fd = d1(g, h);
      scale = std::max(scale, std::abs(fd));
      expect_fd(f.A(r, j), fd, std::abs(fd), row + " A col " + std::to_string(j), st);
    }
    auto along = [&](double s) {
      QVec<Model> qs;
      for (int j = 0; j < n; ++j) qs[j] = q[j] + s * qd[j];
      return phi_of<Model>(qs, t + s, p)[r];
    };
    const double phi0 = phi_of<Model>(q, t, p)[r];
    EXPECT_NEAR(f.value[r], phi0, 1e-13 * (1 + std::abs(phi0))) << row << " value";
    const double rate = d1(along, hq);
    expect_fd(f.rate[r], rate, std::abs(rate) + scale, row + " rate phid", st);
    const double b = -d2(along, hq);
    expect_fd(f.b[r], b, std::abs(b) + std::abs(phi0), row + " b", st);
  }
  for (int r = 0; r < mv; ++r) {
    const int row_index = mp + r;
    const std::string row = std::string(Model::kName) + " velocity row " + std::to_string(r);
    for (int j = 0; j < n; ++j) {
      auto g = [&](double s) {
        QVec<Model> qds = qd;
        qds[j] += s;
        return psi_of<Model>(q, qds, t, p)[r];
      };
      const double fd = d1(g, hq * std::max(1.0, std::abs(qd[j])));
      expect_fd(f.A(row_index, j), fd, std::abs(fd), row + " A col " + std::to_string(j), st);
    }
    auto along = [&](double s) {
      QVec<Model> qs;
      for (int j = 0; j < n; ++j) qs[j] = q[j] + s * qd[j];
      return psi_of<Model>(qs, qd, t + s, p)[r];
    };
    const double psi0 = psi_of<Model>(q, qd, t, p)[r];
    EXPECT_NEAR(f.value[row_index], psi0, 1e-13 * (1 + std::abs(psi0))) << row << " value";
    EXPECT_EQ(f.rate[row_index], 0.0) << row << " rate";
    const double b = -d1(along, hq);
    expect_fd(f.b[row_index], b, std::abs(b) + std::abs(psi0), row + " b", st);
  }

  // The projection's Jacobian of the position rows is the form's.
  if constexpr (mp > 0) {
    Mat<double, mp, n> Ap;
    Vec<double, mp> phi;
    position_rows_with_jacobian<Model, double>(Model{}, q, t, p, Ap, phi);
    for (int r = 0; r < mp; ++r) {
      EXPECT_NEAR(phi[r], f.value[r], 1e-13 * (1 + std::abs(phi[r])));
      for (int j = 0; j < n; ++j) EXPECT_EQ(Ap(r, j), f.A(r, j));
    }
  }
}

// Random states around the model's default initial condition, random times in [0, t_end].
template <class Model>
void check_model(std::uint64_t seed, FdStats& st) {
  constexpr int n = Model::kN;
  double p[kParamCount<Model>];
  for (int k = 0; k < kParamCount<Model>; ++k) p[k] = Model::kParams[k].value;
  QVec<Model> q0, qd0;
  Model::initial_state(p, q0, qd0);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  std::uniform_real_distribution<double> ut(0.0, Model::kTEnd);
  for (int trial = 0; trial < 20; ++trial) {
    QVec<Model> q, qd;
    for (int j = 0; j < n; ++j) {
      q[j] = q0[j] + 0.1 * (1 + std::abs(q0[j])) * g(rng);
      qd[j] = qd0[j] + (1 + std::abs(qd0[j])) * g(rng);
    }
    const double t = trial == 0 ? 0.0 : ut(rng);
    check_form_at<Model>(trial == 0 ? q0 : q, trial == 0 ? qd0 : qd, t, p, st);
  }
}

template <class List>
struct ToTypes;
template <class... Ms>
struct ToTypes<ModelList<Ms...>> {
  using type = ::testing::Types<Ms...>;
};

template <class Model>
class CatalogueConstraintForm : public ::testing::Test {};
TYPED_TEST_SUITE(CatalogueConstraintForm, ToTypes<Catalogue>::type);

TYPED_TEST(CatalogueConstraintForm, MatchesFiniteDifferences) {
  FdStats st;
  check_model<TypeParam>(12345, st);
  ::testing::Test::RecordProperty("worst_fd_error", sci(st.worst));
}

TEST(CatalogueConstraintForm, CoversEveryModel) {
  int count = 0;
  for_each_model([&]<class M>() { ++count; });
  EXPECT_EQ(count, 15);
}

// ---------------------------------------------------------------- test-only models, closed forms

// Two rheonomic position rows and two velocity rows (one nonlinear in qd), one parameter.
//   phi0 = x y - sin(t) z + p0                 A = [y, x, -sin t],
//                                              b = -(2 xd yd + sin(t) z - 2 cos(t) zd)
//   phi1 = exp(0.3 x) + sqrt(1 + y^2) / (2 + cos z) - t^2
//   psi0 = xd + z yd - t zd + exp(-t) x        A = [1, z, -t],
//                                              b = -(zd yd - zd - exp(-t) x + exp(-t) xd)
//   psi1 = sin(x) xd^2 + y zd                  A = [2 sin(x) xd, 0, y], b = -(cos(x) xd^3 + yd zd)
struct Mixed {
  static constexpr const char* kName = "mixed";
  static constexpr int kN = 3;
  static constexpr int kPositionRows = 2;
  static constexpr int kVelocityRows = 2;
  template <class S, class T>
  static void position_rows(const Vec<S, 3>& q, S t, const T* p, S* phi) {
    phi[0] = q[0] * q[1] - sin(t) * q[2] + p[0];
    phi[1] = exp(0.3 * q[0]) + sqrt(1 + q[1] * q[1]) / (2 + cos(q[2])) - t * t;
  }
  template <class S, class T>
  static void velocity_rows(const Vec<S, 3>& q, const Vec<S, 3>& qd, S t, const T*, S* psi) {
    psi[0] = qd[0] + q[2] * qd[1] - t * qd[2] + exp(-t) * q[0];
    psi[1] = sin(q[0]) * qd[0] * qd[0] + q[1] * qd[2];
  }
};

TEST(ConstraintForm, MixedRowsClosedForm) {
  const double x = 0.4, y = -1.2, z = 0.9, xd = 1.5, yd = -0.3, zd = 0.8, t = 0.7;
  const double p[1] = {0.25};
  Vec<double, 3> q, qd;
  q[0] = x;
  q[1] = y;
  q[2] = z;
  qd[0] = xd;
  qd[1] = yd;
  qd[2] = zd;
  const auto f = constraint_form<Mixed, double>(Mixed{}, q, qd, t, p);
  const double e = 1e-14;
  // phi0
  EXPECT_NEAR(f.value[0], x * y - std::sin(t) * z + p[0], e);
  EXPECT_NEAR(f.rate[0], xd * y + x * yd - std::cos(t) * z - std::sin(t) * zd, e);
  EXPECT_NEAR(f.A(0, 0), y, e);
  EXPECT_NEAR(f.A(0, 1), x, e);
  EXPECT_NEAR(f.A(0, 2), -std::sin(t), e);
  EXPECT_NEAR(f.b[0], -(2 * xd * yd + std::sin(t) * z - 2 * std::cos(t) * zd), e);
  // psi0, psi1
  EXPECT_NEAR(f.value[2], xd + z * yd - t * zd + std::exp(-t) * x, e);
  EXPECT_NEAR(f.A(2, 0), 1.0, e);
  EXPECT_NEAR(f.A(2, 1), z, e);
  EXPECT_NEAR(f.A(2, 2), -t, e);
  EXPECT_NEAR(f.b[2], -(zd * yd - zd - std::exp(-t) * x + std::exp(-t) * xd), e);
  EXPECT_NEAR(f.value[3], std::sin(x) * xd * xd + y * zd, e);
  EXPECT_NEAR(f.A(3, 0), 2 * std::sin(x) * xd, e);
  EXPECT_NEAR(f.A(3, 1), 0.0, e);
  EXPECT_NEAR(f.A(3, 2), y, e);
  EXPECT_NEAR(f.b[3], -(std::cos(x) * xd * xd * xd + yd * zd), e);
  EXPECT_EQ(f.rate[2], 0.0);
  EXPECT_EQ(f.rate[3], 0.0);

  // phi1 and everything else against finite differences too.
  FdStats st;
  check_form_at<Mixed>(q, qd, t, p, st);

  // Float: the same numbers to float accuracy.
  Vec<float, 3> qf, qdf;
  for (int j = 0; j < 3; ++j) {
    qf[j] = float(q[j]);
    qdf[j] = float(qd[j]);
  }
  const float pf[1] = {0.25f};
  const auto ff = constraint_form<Mixed, float>(Mixed{}, qf, qdf, float(t), pf);
  for (int r = 0; r < 4; ++r) {
    EXPECT_NEAR(ff.b[r], f.b[r], 1e-5 * (1 + std::abs(f.b[r])));
    EXPECT_NEAR(ff.value[r], f.value[r], 1e-5 * (1 + std::abs(f.value[r])));
    EXPECT_NEAR(ff.rate[r], f.rate[r], 1e-5 * (1 + std::abs(f.rate[r])));
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(ff.A(r, j), f.A(r, j), 1e-5 * (1 + std::abs(f.A(r, j))));
  }
}

TEST(ConstraintForm, MixedRowsRandomStatesAgainstFiniteDifferences) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> g(0.0, 1.0);
  const double p[1] = {-0.6};
  FdStats st;
  for (int trial = 0; trial < 50; ++trial) {
    Vec<double, 3> q, qd;
    for (int j = 0; j < 3; ++j) {
      q[j] = g(rng);
      qd[j] = 2 * g(rng);
    }
    check_form_at<Mixed>(q, qd, 3 * std::abs(g(rng)), p, st);
  }
  RecordProperty("worst_fd_error", sci(st.worst));
}

// Baumgarte: position rows b - alpha phid - beta phi, velocity rows b - alpha psi; zero gains
// leave b unchanged.
TEST(ConstraintForm, StabilizedRhs) {
  Vec<double, 3> q, qd;
  q[0] = 0.3;
  q[1] = 0.5;
  q[2] = -0.2;
  qd[0] = -0.7;
  qd[1] = 1.1;
  qd[2] = 0.4;
  const double p[1] = {1.0};
  const auto f = constraint_form<Mixed, double>(Mixed{}, q, qd, 0.9, p);
  const double alpha = 2.5, beta = 7.0;
  const Vec<double, 4> bs = stabilized_rhs(f, alpha, beta);
  for (int r = 0; r < 2; ++r)
    EXPECT_DOUBLE_EQ(bs[r], f.b[r] - alpha * f.rate[r] - beta * f.value[r]) << r;
  for (int r = 2; r < 4; ++r) EXPECT_DOUBLE_EQ(bs[r], f.b[r] - alpha * f.value[r]) << r;
  const Vec<double, 4> b0 = stabilized_rhs(f, 0.0, 0.0);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(b0[r], f.b[r]);
  // The residual dynamics this encodes (phidd + alpha phid + beta phi = 0) is checked through
  // the engine in tests/integrators (Engine.BaumgarteResidualDynamics).
  EXPECT_NE(bs[0], f.b[0]);
}

// Duffing's reference form (docs/MODELS.md sec. 4): A = [1, -1],
// b = -A0 e^{-alpha t} (omega^2 sin wt + 2 omega alpha cos wt - alpha^2 sin wt).
TEST(ConstraintForm, DuffingReference) {
  using D = models::Duffing;
  double p[kParamCount<D>];
  for (int k = 0; k < kParamCount<D>; ++k) p[k] = D::kParams[k].value;
  const double A0 = 1.0, w = 2 * std::numbers::pi, al = 1.0;
  for (double t : {0.0, 0.3, 1.7, 4.2}) {
    Vec<double, 2> q, qd;
    q[0] = 0.4;
    q[1] = -0.1;
    qd[0] = 1.0;
    qd[1] = 2.0;
    const auto f = constraint_form<D, double>(D{}, q, qd, t, p);
    EXPECT_EQ(f.A(0, 0), 1.0);
    EXPECT_EQ(f.A(0, 1), -1.0);
    const double b =
        -A0 * std::exp(-al * t) *
        (w * w * std::sin(w * t) + 2 * w * al * std::cos(w * t) - al * al * std::sin(w * t));
    EXPECT_NEAR(f.b[0], b, 1e-13 * (1 + std::abs(b))) << t;
    EXPECT_NEAR(f.value[0], 0.5 - A0 * std::exp(-al * t) * std::sin(w * t), 1e-15);
  }
}

}  // namespace
}  // namespace ukes
