// Compiled constraint rows as jets against finite differences of the same rows in plain
// arithmetic, on randomly generated definitions (fixed seeds) that use every function of the
// language, through intermediates: gradients, and the Taylor coefficients along a curve.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/autodiff/jet.hpp"
#include "tests/expr/expr_support.hpp"

namespace ukes::testing {
namespace {

// A random smooth expression, free of domain errors and kinks near the evaluation points: every
// function appears with its argument kept inside its domain (log(2 + sin(..)), sqrt(1 + ..^2)).
class ExpressionGenerator {
 public:
  ExpressionGenerator(std::vector<std::string> leaves, unsigned seed)
      : leaves_(std::move(leaves)), rng_(seed) {}

  std::string operator()(int depth) {
    if (depth == 0 || pick(5) == 0) return leaf();
    const auto a = [&] { return (*this)(depth - 1); };
    switch (pick(23)) {
      case 0:
        return "(" + a() + " + " + a() + ")";
      case 1:
        return "(" + a() + " - " + a() + ")";
      case 2:
        return a() + " * " + a();
      case 3:
        return a() + " / (2 + cos(" + a() + "))";
      case 4:
        return "sin(" + a() + ")";
      case 5:
        return "cos(" + a() + ")";
      case 6:
        return "exp(0.3 * sin(" + a() + "))";
      case 7:
        return "sqrt(1 + (" + a() + ")^2)";
      case 8:
        return "log(2 + sin(" + a() + "))";
      case 9:
        return "atan2(" + a() + ", 3 + hypot(" + a() + ", 1))";
      case 10:
        return "tanh(" + a() + ")";
      case 11:
        return "atan(" + a() + ")";
      case 12:
        return "sinh(0.3 * sin(" + a() + "))";
      case 13:
        return "cosh(0.3 * sin(" + a() + "))";
      case 14:
        return "asin(0.5 * sin(" + a() + "))";
      case 15:
        return "acos(0.5 * cos(" + a() + "))";
      case 16:
        return "tan(0.5 * sin(" + a() + "))";
      case 17:
        return "pow(1.5 + sin(" + a() + "), cos(" + a() + "))";
      case 18:
        return "(" + a() + ")^3";
      case 19:
        return "-" + a();
      case 20:
        return "if(p0 > 0, " + a() + ", " + a() + ")";
      case 21:
        return "min(sin(" + a() + "), 2 + cos(" + a() + "))";  // always the first
      default:
        return "max(cos(" + a() + "), -2 + sin(" + a() + "))";
    }
  }

  // One that fits the length limit of an expression.
  std::string bounded(int depth) {
    std::string e = (*this)(depth);
    while (e.size() > 4000) e = (*this)(depth);
    return e;
  }

 private:
  int pick(int k) { return std::uniform_int_distribution<int>(0, k - 1)(rng_); }
  std::string leaf() {
    if (pick(5) == 0) return std::to_string(0.25 + 0.25 * pick(6));
    return leaves_[static_cast<std::size_t>(pick(static_cast<int>(leaves_.size())))];
  }
  std::vector<std::string> leaves_;
  std::mt19937 rng_;
};

constexpr int kMaxN = 4;
using J = Jet<double, kMaxN>;

// n coordinates q0.., parameters p0, p1; intermediates w0 (positions), w1 (using w0), u0
// (rates); position rows over w0, w1; velocity rows over everything.
UserModelDefinition random_definition(int n, unsigned seed) {
  std::vector<std::string> positions = {"t", "p0", "p1"}, rates;
  for (int j = 0; j < n; ++j) {
    positions.push_back(numbered("q", j));
    rates.push_back(numbered("q", j) + "_dot");
  }
  nlohmann::json d;
  d["name"] = "random";
  for (int j = 0; j < n; ++j) d["coordinates"].push_back(numbered("q", j));
  d["parameters"] = {{{"name", "p0"}, {"value", 0.8}}, {{"name", "p1"}, {"value", -1.3}}};
  d["mass"]["diagonal"] = std::vector<int>(static_cast<std::size_t>(n), 1);
  d["force"] = std::vector<int>(static_cast<std::size_t>(n), 0);
  ExpressionGenerator first(positions, seed);
  d["intermediates"].push_back({{"name", "w0"}, {"expr", first.bounded(3)}});
  positions.push_back("w0");
  ExpressionGenerator second(positions, seed + 1000);
  d["intermediates"].push_back({{"name", "w1"}, {"expr", second.bounded(3)}});
  positions.push_back("w1");
  std::vector<std::string> all = positions;
  all.insert(all.end(), rates.begin(), rates.end());
  ExpressionGenerator with_rates(all, seed + 2000);
  d["intermediates"].push_back({{"name", "u0"}, {"expr", with_rates.bounded(2)}});
  all.push_back("u0");
  ExpressionGenerator position(positions, seed + 3000), velocity(all, seed + 4000);
  for (int r = 0; r < 2; ++r) d["position_constraints"].push_back(position.bounded(4));
  for (int r = 0; r < 2; ++r) d["velocity_constraints"].push_back(velocity.bounded(4));
  return parse_user_model(d);
}

// A point (q, qd, t) and the curve through it along which the jets move.
struct Curve {
  std::vector<double> q, qd, vq, wq, vqd, wqd;
  double t = 0.3;
  // The point at curve parameter s (t moves at unit rate).
  void at(double s, std::vector<double>& qs, std::vector<double>& qds, double& ts) const {
    qs = q;
    qds = qd;
    for (std::size_t j = 0; j < q.size(); ++j) {
      qs[j] += vq[j] * s + wq[j] * s * s;
      qds[j] += vqd[j] * s + wqd[j] * s * s;
    }
    ts = t + s;
  }
};

Curve random_curve(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Curve c;
  for (auto* v : {&c.q, &c.qd, &c.vq, &c.wq, &c.vqd, &c.wqd})
    for (int j = 0; j < n; ++j) v->push_back(u(rng));
  return c;
}

std::vector<double> plain_rows(const UserModelDefinition& d, expr::Segment segment, int rows,
                               const std::vector<double>& q, const std::vector<double>& qd,
                               double t) {
  const double p[] = {0.8, -1.3};
  return run<double, double>(d, segment, {q.data(), qd.data(), t, p, nullptr}, rows);
}

// Jets seeded on q (position rows) or qd (velocity rows), all moving along the curve.
std::vector<J> jet_rows(const UserModelDefinition& d, expr::Segment segment, int rows,
                        const Curve& c, bool seed_rates) {
  std::vector<J> q, qd;
  for (std::size_t j = 0; j < c.q.size(); ++j) {
    const int k = static_cast<int>(j);
    q.push_back(seed_rates ? J(c.q[j], c.vq[j], c.wq[j])
                           : J::variable(c.q[j], k, c.vq[j], c.wq[j]));
    qd.push_back(seed_rates ? J::variable(c.qd[j], k, c.vqd[j], c.wqd[j])
                            : J(c.qd[j], c.vqd[j], c.wqd[j]));
  }
  const double p[] = {0.8, -1.3};
  return run<J, double>(d, segment, {q.data(), qd.data(), J(c.t, 1.0, 0.0), p, nullptr}, rows);
}

double tolerance(double reference, double relative) {
  return relative * std::max(1.0, std::abs(reference));
}

void check_segment(const UserModelDefinition& d, expr::Segment segment, int rows, const Curve& c,
                   bool seed_rates) {
  const std::vector<J> jets = jet_rows(d, segment, rows, c, seed_rates);
  const auto along = [&](double s) {
    std::vector<double> q, qd;
    double t = 0;
    c.at(s, q, qd, t);
    return plain_rows(d, segment, rows, q, qd, t);
  };
  const double h = 1e-4;
  const auto zero = along(0), plus = along(h), minus = along(-h);
  for (int r = 0; r < rows; ++r) {
    SCOPED_TRACE(numbered("row ", r));
    const J& row = jets[static_cast<std::size_t>(r)];
    EXPECT_NEAR(row.c0, zero[r], tolerance(zero[r], 1e-13));
    const double first = (plus[r] - minus[r]) / (2 * h);
    const double second = (plus[r] - 2 * zero[r] + minus[r]) / (h * h);
    EXPECT_NEAR(row.c1, first, tolerance(first, 1e-6));
    EXPECT_NEAR(2 * row.c2, second, tolerance(second, 1e-4));
  }
  const double g = 1e-6;
  for (std::size_t j = 0; j < c.q.size(); ++j) {
    auto q_plus = c.q, q_minus = c.q, qd_plus = c.qd, qd_minus = c.qd;
    (seed_rates ? qd_plus : q_plus)[j] += g;
    (seed_rates ? qd_minus : q_minus)[j] -= g;
    const auto up = plain_rows(d, segment, rows, q_plus, qd_plus, c.t);
    const auto down = plain_rows(d, segment, rows, q_minus, qd_minus, c.t);
    for (int r = 0; r < rows; ++r) {
      const double fd = (up[r] - down[r]) / (2 * g);
      EXPECT_NEAR(jets[static_cast<std::size_t>(r)].gradient(static_cast<int>(j)), fd,
                  tolerance(fd, 1e-7))
          << "row " << r << ", input " << j;
    }
  }
}

TEST(RandomDefinitions, JetRowsMatchFiniteDifferences) {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    const int n = 1 + static_cast<int>(seed % kMaxN);
    const UserModelDefinition d = random_definition(n, seed);
    SCOPED_TRACE(numbered("seed ", seed) + ": " + d.canonical_json);
    const Curve c = random_curve(n, seed);
    check_segment(d, expr::Segment::kPositionRows, d.position_rows, c, false);
    check_segment(d, expr::Segment::kVelocityRows, d.velocity_rows, c, true);
  }
}

// The same programs on plain floats give the double values to float accuracy.
TEST(RandomDefinitions, FloatFollowsDouble) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const int n = 1 + static_cast<int>(seed % kMaxN);
    const UserModelDefinition d = random_definition(n, seed);
    SCOPED_TRACE(numbered("seed ", seed) + ": " + d.canonical_json);
    const Curve c = random_curve(n, seed);
    const auto expected = plain_rows(d, expr::Segment::kPositionRows, 2, c.q, c.qd, c.t);
    std::vector<float> q(c.q.begin(), c.q.end()), qd(c.qd.begin(), c.qd.end());
    const float p[] = {0.8f, -1.3f};
    const auto got = run<float, float>(d, expr::Segment::kPositionRows,
                                       {q.data(), qd.data(), float(c.t), p, nullptr}, 2);
    for (int r = 0; r < 2; ++r) EXPECT_NEAR(got[r], expected[r], tolerance(expected[r], 1e-4));
  }
}

}  // namespace
}  // namespace ukes::testing
