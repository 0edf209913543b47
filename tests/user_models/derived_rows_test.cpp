// The A and b the kernels derive from a user model's rows (kernels/uk/constraint_form.hpp on the
// compiled program) against finite differences of the rows themselves, on randomly generated
// definitions; and redundant rows, which must change nothing.
#include "kernels/models/derived_rows.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"

namespace ukes {
namespace {

std::string coordinate(int j) {
  std::string name = "q";
  name += std::to_string(j);
  return name;
}

// A random smooth expression over q0..q{n-1}, their rates (velocity rows only), t and p0, p1,
// free of domain errors near the evaluation points.
class ExpressionGenerator {
 public:
  ExpressionGenerator(int n, bool rates, unsigned seed) : n_(n), rates_(rates), rng_(seed) {}

  std::string operator()(int depth) {
    if (depth == 0 || pick(4) == 0) return leaf();
    switch (pick(8)) {
      case 0:
        return "(" + (*this)(depth - 1) + " + " + (*this)(depth - 1) + ")";
      case 1:
        return "(" + (*this)(depth - 1) + " - " + (*this)(depth - 1) + ")";
      case 2:
        return "(" + (*this)(depth - 1) + " * " + (*this)(depth - 1) + ")";
      case 3:
        return "(" + (*this)(depth - 1) + " / (2 + cos(" + (*this)(depth - 1) + ")))";
      case 4:
        return "sin(" + (*this)(depth - 1) + ")";
      case 5:
        return "exp(0.3 * " + (*this)(depth - 1) + ")";
      case 6:
        return "sqrt(1 + (" + (*this)(depth - 1) + ")^2)";
      default:
        return "atan2(" + (*this)(depth - 1) + ", 3 + hypot(" + (*this)(depth - 1) + ", 1))";
    }
  }

 private:
  int pick(int k) { return std::uniform_int_distribution<int>(0, k - 1)(rng_); }
  std::string leaf() {
    switch (pick(rates_ ? 5 : 4)) {
      case 0:
        return "t";
      case 1:
        return pick(2) ? "p0" : "p1";
      case 2:
        return std::to_string(0.5 + 0.25 * pick(5));
      case 3:
        return coordinate(pick(n_));
      default:
        return coordinate(pick(n_)).append("_dot");
    }
  }
  int n_;
  bool rates_;
  std::mt19937 rng_;
};

std::shared_ptr<const ModelInfo> random_model(int n, int position_rows, int velocity_rows,
                                              unsigned seed) {
  nlohmann::json d;
  d["name"] = "random_" + std::to_string(seed);
  for (int j = 0; j < n; ++j) d["coordinates"].push_back(coordinate(j));
  d["parameters"] = {{{"name", "p0"}, {"value", 0.8}}, {{"name", "p1"}, {"value", -1.3}}};
  d["mass"]["diagonal"] = std::vector<int>(static_cast<std::size_t>(n), 1);
  d["force"] = std::vector<int>(static_cast<std::size_t>(n), 0);
  ExpressionGenerator position(n, false, seed), velocity(n, true, seed + 1000);
  for (int r = 0; r < position_rows; ++r) d["position_constraints"].push_back(position(4));
  // Velocity rows affine in the rates, as the UK form assumes: sum_j c_j(q, t) qd_j + d(q, t).
  for (int r = 0; r < velocity_rows; ++r) {
    std::string row = position(3);
    for (int j = 0; j < n; ++j)
      row.append(" + (").append(position(2)).append(") * ").append(coordinate(j)).append("_dot");
    d["velocity_constraints"].push_back(row);
  }
  return make_user_model_info(parse_user_model(d));
}

std::vector<double> rows_at(const ModelInfo& m, const std::vector<double>& q,
                            const std::vector<double>& qd, double t) {
  return derived_rows(m, q, qd, t, m.default_params()).value;
}

TEST(DerivedRows, MatchFiniteDifferencesOnRandomDefinitions) {
  constexpr double h = 1e-5;
  for (unsigned seed = 1; seed <= 30; ++seed) {
    const int n = 1 + static_cast<int>(seed % 5), mp = static_cast<int>(seed % 3),
              mv = static_cast<int>((seed / 3) % 3);
    const auto model = random_model(n, mp, mv, seed);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + model->user->definition.canonical_json);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> q(static_cast<std::size_t>(n)), qd(q.size());
    for (int j = 0; j < n; ++j) q[j] = u(rng), qd[j] = u(rng);
    const double t = 0.3;
    const DerivedRows d = derived_rows(*model, q, qd, t, model->default_params());
    for (int j = 0; j < n; ++j) {
      // Position rows: A = d phi / dq; velocity rows: A = d psi / dqd.
      auto qp = q, qm = q, qdp = qd, qdm = qd;
      qp[j] += h, qm[j] -= h, qdp[j] += h, qdm[j] -= h;
      const auto by_q = [&](int r) {
        return (rows_at(*model, qp, qd, t)[r] - rows_at(*model, qm, qd, t)[r]) / (2 * h);
      };
      const auto by_qd = [&](int r) {
        return (rows_at(*model, q, qdp, t)[r] - rows_at(*model, q, qdm, t)[r]) / (2 * h);
      };
      for (int r = 0; r < mp; ++r)
        EXPECT_NEAR(d.A[r * n + j], by_q(r), 1e-6 * (1 + std::abs(by_q(r))));
      for (int r = mp; r < mp + mv; ++r)
        EXPECT_NEAR(d.A[r * n + j], by_qd(r), 1e-6 * (1 + std::abs(by_qd(r))));
    }
    // b: minus the second derivative of phi along (q + s qd, t + s), minus the first of psi.
    const auto along = [&](double s) {
      auto qs = q;
      for (int j = 0; j < n; ++j) qs[j] += s * qd[j];
      return rows_at(*model, qs, qd, t + s);
    };
    const auto plus = along(1e-4), zero = along(0.0), minus = along(-1e-4);
    for (int r = 0; r < mp; ++r) {
      const double second = (plus[r] - 2 * zero[r] + minus[r]) / 1e-8;
      EXPECT_NEAR(d.b[r], -second, 1e-4 * (1 + std::abs(second))) << "position row " << r;
    }
    const auto plus_v = along(h), minus_v = along(-h);
    for (int r = mp; r < mp + mv; ++r) {
      const double first = (plus_v[r] - minus_v[r]) / (2 * h);
      EXPECT_NEAR(d.b[r], -first, 1e-6 * (1 + std::abs(first))) << "velocity row " << r;
    }
  }
}

// A Cartesian pendulum with its rod written once, and three times (twice the same, once scaled):
// redundant rows add no constraint, so the motion is the same.
TEST(RedundantRows, RepeatedRowsChangeNothing) {
  nlohmann::json once = nlohmann::json::parse(R"json({
    "name": "cartesian_pendulum", "coordinates": ["x", "y"],
    "parameters": [{"name": "m", "value": 1.5}, {"name": "l", "value": 0.8},
                   {"name": "g", "value": 9.81}],
    "mass": {"diagonal": ["m", "m"]}, "force": [0, "-m * g"],
    "position_constraints": ["x^2 + y^2 - l^2"],
    "initial_state": {"q": ["l * sin(1)", "-l * cos(1)"], "qd": [0, 0]},
    "t_end": 3.0, "baumgarte": {"alpha": 10, "beta": 25}})json");
  nlohmann::json thrice = once;
  thrice["name"] = "cartesian_pendulum_redundant";
  thrice["position_constraints"].push_back("x^2 + y^2 - l^2");
  thrice["position_constraints"].push_back("3 * (x^2 + y^2 - l^2)");
  const auto a = make_user_model_info(parse_user_model(once));
  const auto b = make_user_model_info(parse_user_model(thrice));
  EnsembleSettings s = EnsembleSettings::for_model(*a);
  s.method = Method::kRk4;
  s.dt = 1e-3;
  s.threads = 1;
  BatchResults ra, rb;
  run_ensemble_cpu(Batch::defaults(*a, 1), s, ra);
  run_ensemble_cpu(Batch::defaults(*b, 1), s, rb);
  ASSERT_EQ(ra.status[0], 0);
  ASSERT_EQ(rb.status[0], 0);
  for (int j = 0; j < 2; ++j) {
    EXPECT_NEAR(rb.q_at(j, 0), ra.q_at(j, 0), 1e-9);
    EXPECT_NEAR(rb.qd_at(j, 0), ra.qd_at(j, 0), 1e-9);
  }
  // The pendulum keeps its length either way.
  const double r2 = ra.q_at(0, 0) * ra.q_at(0, 0) + ra.q_at(1, 0) * ra.q_at(1, 0);
  EXPECT_NEAR(std::sqrt(r2), 0.8, 1e-8);
}

}  // namespace
}  // namespace ukes
