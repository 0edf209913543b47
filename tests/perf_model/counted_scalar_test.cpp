// The counting scalar of the performance model (benchmarks/perf_model/): it counts what it is
// asked to, and running the shared code on it changes no number, so the counts are those of the
// operations the double kernels run.
#include "benchmarks/perf_model/counted_scalar.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "kernels/models/catalogue.hpp"
#include "kernels/uk/dynamics.hpp"

namespace ukes {
namespace {

using perf::Counted;
using perf::op_counts;
using perf::OpCounts;

TEST(CountedScalar, CountsEachOperationByKind) {
  op_counts() = OpCounts{};
  const Counted a = 2.0, b = 3.0, c = 1.0, d = 4.0;
  const Counted r = (a * b + c) / sqrt(d) - sin(a);
  EXPECT_DOUBLE_EQ(r.v, 3.5 - std::sin(2.0));
  const OpCounts n = op_counts();
  EXPECT_EQ(n.mul, 1);
  EXPECT_EQ(n.add, 2);
  EXPECT_EQ(n.div, 1);
  EXPECT_EQ(n.sqrt, 1);
  EXPECT_EQ(n.transcendental, 1);
  EXPECT_EQ(n.compare, 0);
  EXPECT_TRUE(a < b);
  EXPECT_EQ(op_counts().compare, 1);
}

bool same_bits(double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; }

// Every catalogue model's UK acceleration at its default state, on doubles and on Counted.
TEST(CountedScalar, TheSharedCodeGivesTheSameNumbersOnIt) {
  for_each_model(Catalogue{}, [&]<class Model>() {
    constexpr int n = Model::kN;
    double p[kParamCount<Model> > 0 ? kParamCount<Model> : 1] = {};
    Counted pc[kParamCount<Model> > 0 ? kParamCount<Model> : 1];
    for (int k = 0; k < kParamCount<Model>; ++k) pc[k] = p[k] = Model::kParams[k].value;
    Vec<double, n> q, qd;
    Model::initial_state(p, q, qd);
    Vec<Counted, n> qc, qdc;
    for (int j = 0; j < n; ++j) {
      qc[j] = q[j];
      qdc[j] = qd[j];
    }
    DynamicsSettings<double> s;
    DynamicsSettings<Counted> sc;
    s.alpha = Model::kGains.alpha;
    s.beta = Model::kGains.beta;
    sc.alpha = s.alpha;
    sc.beta = s.beta;
    const auto plain = evaluate_dynamics<Model, double>(Model{}, q, qd, 0.1, p, s);
    op_counts() = OpCounts{};
    const auto counted = evaluate_dynamics<Model, Counted>(Model{}, qc, qdc, 0.1, pc, sc);
    for (int j = 0; j < n; ++j)
      EXPECT_TRUE(same_bits(plain.qdd[j], counted.qdd[j].v)) << Model::kName << " qdd " << j;
    EXPECT_GT(op_counts().arithmetic(), 10 * n) << Model::kName;
  });
}

}  // namespace
}  // namespace ukes
