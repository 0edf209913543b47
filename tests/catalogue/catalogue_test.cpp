// The model catalogue is a contract (the docs/MODELS.md, copied here as data): exactly these 15
// names in this order, and for each model its dimension, constraint row counts, coordinate
// names, parameter names / defaults / structural flags, default end time, default Baumgarte
// gains, non-ideal flag and default initial condition.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/models/model_info.hpp"

namespace ukes {
namespace {

struct Param {
  const char* name;
  double value;
  bool structural = false;
};

struct Expected {
  const char* name;
  int n;
  int position_rows;
  int velocity_rows;
  bool nonideal;
  std::vector<const char*> coordinates;
  std::vector<Param> params;
  double t_end;
  double alpha, beta;
  std::vector<double> q0, qd0;
};

const double kPi = std::numbers::pi;
const double kE3 = std::exp(3.0);
const double kDeg = kPi / 180.0;

// Copied from docs/MODELS.md, sections 1-15:
// name, n, position rows, velocity rows, non-ideal, coordinates, parameters, t_end,
// Baumgarte alpha, beta, default q0, qd0.
// clang-format off
const std::vector<Expected>& expected_catalogue() {
  static const std::vector<Expected> e = {
    {"spiral", 2, 2, 0, false, {"r", "theta"},
     {{"g", 9.81}, {"k", 0.1}, {"omega", 1.0}, {"theta0", 30.0}},
     20.0, 0.0, 0.0, {kE3, 30.0}, {-0.1 * kE3, -1.0}},
    {"swarm", 10, 0, 10, false, {"x1", "y1", "x2", "y2", "x3", "y3", "x4", "y4", "x5", "y5"},
     {{"N", 5.0, true}, {"mass", 2.0}, {"a", 0.5}},
     20.0, 5.0, 0.0, {0, 0, 4, 1, -3, 2, 2, -4, -1, -3}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {"flexible_joint", 4, 0, 1, false, {"th1", "th2", "m1ang", "m2ang"},
     {{"m1", 1.0}, {"m2", 1.0}, {"l1", 1.0}, {"lc1", 0.5}, {"lc2", 0.5}, {"I1", 1.0},
      {"I2", 1.0}, {"J1", 1.0}, {"J2", 1.0}, {"K1", 1.0}, {"K2", 1.0}, {"g", 9.81},
      {"u1", 0.0}, {"u2", 0.0}},
     10.0, 2.0, 0.0, {0, 0, 0, 0}, {1.0, -0.1, 0, 0}},
    {"duffing", 2, 1, 0, false, {"x1", "x2"},
     {{"m1", 2.0}, {"m2", 1.0}, {"k1", 10.0}, {"k2", 12.0}, {"k1nl", 1.0}, {"k2nl", 2.0},
      {"c1", 0.1}, {"c2", 0.15}, {"A0", 1.0}, {"omega", 2 * kPi}, {"alpha", 1.0}},
     5.0, 0.0, 0.0, {1.0, 1.0}, {2 * kPi + 2.0, 2.0}},
    {"two_rod_pendulum", 3, 2, 0, false, {"x", "y", "z"},
     {{"L1", 1.0}, {"L2", 1.0}, {"g", 10.0}, {"m", 1.0}},
     3.0, 0.0, 0.0, {1, 0, 0}, {0, 4, 0}},
    {"scara", 4, 4, 0, false, {"q1", "q2", "q3", "q4"},
     {{"m1", 20.0}, {"m2", 15.0}, {"m3", 15.0}, {"m4", 0.5}, {"l0", 0.0}, {"l1", 0.2},
      {"l2", 0.25}, {"r1", 0.1}, {"r2", 0.125}, {"Iz1", 0.27}, {"Iz2", 0.31}, {"Iz3", 0.02},
      {"Iz4", 0.0001}, {"g", 9.81}, {"xc", 0.0}, {"yc", 0.35}, {"R", 0.05},
      {"Omega", 0.4 * kPi}, {"vz", 0.02}, {"psi0", 0.0}},
     10.0, 30.0, 225.0, {30 * kDeg, 55 * kDeg, 24 * kDeg, 0.0}, {-0.157, 0.0001, 0.157, 0.0195}},
    {"pendulum_polar", 2, 1, 0, false, {"r", "th"},
     {{"m", 1.0}, {"L", 1.0}, {"g", 9.81}, {"fx", 0.0}},
     10.0, 0.0, 0.0, {1.0, kPi / 3}, {0.0, 0.0}},
    {"slider_crank", 3, 2, 0, false, {"th", "ph", "x"},
     {{"a", 0.1}, {"l", 0.3}, {"m1", 1.0}, {"m2", 1.0}, {"m3", 0.5}, {"g", 9.81}, {"tau", 0.0},
      {"Fx", 0.0}},
     2.0, 0.0, 0.0, {0.523598775598299, 0.167448079219689, 0.382406529533425},
     {10.0, 2.9277002188456, -0.64638501094228}},
    {"four_bar", 9, 8, 0, false, {"x1", "y1", "th1", "x2", "y2", "th2", "x3", "y3", "th3"},
     {{"L1", 1.0}, {"L2", 3.0}, {"L3", 2.0}, {"d", 2.5}, {"m1", 1.0}, {"m2", 3.0}, {"m3", 2.0},
      {"g", 9.81}, {"tau", 0.0}},
     10.0, 0.0, 0.0,
     {0.25, 0.433012701892219, 1.0471975511966, 1.92351207495062, 1.33890316015471,
      0.320722011634256, 2.92351207495062, 0.905890458262487, -2.00811508058688},
     {-0.866025403784438, 0.500000000000001, 2, -1.69464129880816, 0.887385509845916,
      -0.0791103160526351, -0.828615895023725, 0.387385509845916, 0.914697673947272}},
    {"chaplygin_sleigh", 3, 0, 1, false, {"x", "y", "th"},
     {{"m", 1.0}, {"I", 0.1}, {"a", 0.5}},
     20.0, 0.0, 0.0, {0, 0, 0}, {1.0, 0.5, 1.0}},
    {"friction_ring", 2, 1, 0, true, {"x", "y"},
     {{"m", 1.0}, {"R", 1.0}, {"g", 9.81}, {"mu", 0.2}, {"eps", 1e-3}},
     10.0, 0.0, 0.0, {1.0, 0.0}, {0.0, 3.0}},
    {"projectile_polar", 2, 0, 0, false, {"r", "th"},
     {{"g", 9.81}},
     0.5, 0.0, 0.0, {1.0, kPi / 4}, {1.0, 0.0}},
    {"pfaffian_particle", 3, 0, 1, false, {"x", "y", "z"},
     {{"m", 1.0}, {"g", 9.81}},
     5.0, 0.0, 0.0, {0, 0, 0}, {1, 1, -1}},
    {"moving_support_pendulum", 2, 1, 0, false, {"x", "y"},
     {{"m", 1.0}, {"L", 1.0}, {"g", 9.81}, {"Xs", 0.1}, {"Ws", 5.0}},
     10.0, 0.0, 0.0, {std::sin(0.3), -std::cos(0.3)}, {0.5, 0.0}},
    {"ellipse_particle", 2, 1, 0, false, {"x", "y"},
     {{"m", 1.0}, {"ax", 2.0}, {"by", 1.0}, {"g", 9.81}},
     10.0, 0.0, 0.0, {2.0, 0.0}, {0.0, 1.0}},
  };
  return e;
}
// clang-format on

TEST(Catalogue, ExactlyTheFifteenNamesInOrder) {
  const auto& cat = catalogue_info();
  const auto& exp = expected_catalogue();
  ASSERT_EQ(exp.size(), 15u);
  ASSERT_EQ(cat.size(), exp.size());
  for (std::size_t k = 0; k < exp.size(); ++k) EXPECT_EQ(cat[k].name, exp[k].name) << k;
  for (const auto& e : exp) EXPECT_NE(find_model(e.name), nullptr) << e.name;
  EXPECT_EQ(find_model("no_such_model"), nullptr);
}

class CatalogueModel : public ::testing::TestWithParam<int> {};

TEST_P(CatalogueModel, MatchesModelsMd) {
  const Expected& e = expected_catalogue()[std::size_t(GetParam())];
  SCOPED_TRACE(e.name);
  const ModelInfo* m = find_model(e.name);
  ASSERT_NE(m, nullptr);
  EXPECT_NE(m->source, "stub") << "still a placeholder";
  EXPECT_EQ(m->n, e.n);
  EXPECT_EQ(m->position_rows, e.position_rows);
  EXPECT_EQ(m->velocity_rows, e.velocity_rows);
  EXPECT_EQ(m->rows(), e.position_rows + e.velocity_rows);
  EXPECT_EQ(m->residual_slots(), 2 * e.position_rows + e.velocity_rows);
  EXPECT_EQ(m->nonideal, e.nonideal);

  ASSERT_EQ(m->coordinates.size(), e.coordinates.size());
  for (std::size_t j = 0; j < e.coordinates.size(); ++j)
    EXPECT_EQ(m->coordinates[j], e.coordinates[j]) << "coordinate " << j;

  ASSERT_EQ(m->params.size(), e.params.size());
  for (std::size_t k = 0; k < e.params.size(); ++k) {
    EXPECT_EQ(std::string(m->params[k].name), e.params[k].name) << "parameter " << k;
    EXPECT_NEAR(m->params[k].value, e.params[k].value, 1e-15 * std::abs(e.params[k].value))
        << e.params[k].name;
    // Bit for bit: each default is the double nearest docs/MODELS.md's number (2 pi, 0.4 pi
    // included).
    EXPECT_EQ(m->params[k].value, e.params[k].value) << e.params[k].name;
    EXPECT_EQ(m->params[k].structural, e.params[k].structural) << e.params[k].name;
    EXPECT_EQ(m->param_index(e.params[k].name), int(k));
  }

  EXPECT_EQ(m->t_end, e.t_end);
  EXPECT_EQ(m->gains.alpha, e.alpha);
  EXPECT_EQ(m->gains.beta, e.beta);
  // The run defaults derived from them.
  const EnsembleSettings s = EnsembleSettings::for_model(*m);
  EXPECT_EQ(s.t_end, e.t_end);
  EXPECT_EQ(s.alpha, e.alpha);
  EXPECT_EQ(s.beta, e.beta);

  // Default initial condition at default parameters (the catalogue gives up to 15 digits).
  ASSERT_EQ(m->q0.size(), e.q0.size());
  ASSERT_EQ(m->qd0.size(), e.qd0.size());
  for (int j = 0; j < e.n; ++j) {
    EXPECT_NEAR(m->q0[j], e.q0[j], 1e-12 * (1 + std::abs(e.q0[j]))) << "q0[" << j << "]";
    EXPECT_NEAR(m->qd0[j], e.qd0[j], 1e-12 * (1 + std::abs(e.qd0[j]))) << "qd0[" << j << "]";
  }
}

INSTANTIATE_TEST_SUITE_P(AllModels, CatalogueModel, ::testing::Range(0, 15),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                           return std::string(
                               expected_catalogue()[std::size_t(param_info.param)].name);
                         });

}  // namespace
}  // namespace ukes
