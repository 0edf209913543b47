// The catalogue written as definition files (client/examples/models/) runs through the user-model
// path and gives what the built-in models give: the same kernels on a program instead of compiled
// functions, in a bucket larger than the model when the model is not a bucket's size.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/models/user/compiled_model.hpp"
#include "tests/support/example_models.hpp"

namespace ukes {
namespace {

// Systems at the defaults, the velocities of all but the first nudged so that no two are alike.
Batch systems_of(const ModelInfo& model) {
  Batch b = Batch::defaults(model, 4);
  for (int i = 1; i < b.count; ++i)
    for (int j = 0; j < model.n; ++j) b.qd(j, i) += 1e-3 * i * (j + 1);
  return b;
}

double relative_difference(double a, double b) {
  return std::abs(a - b) / std::max(1.0, std::max(std::abs(a), std::abs(b)));
}

struct Case {
  Method method;
  Precision precision;
  double tolerance;  // relative, on final states and residual maxima
  double floor;      // absolute, on residual maxima (rounding-sized ones)
};

class CatalogueDefinitions : public ::testing::TestWithParam<std::string> {};

TEST_P(CatalogueDefinitions, DefinitionMatchesItsBuiltIn) {
  const ModelInfo& builtin = *find_model(GetParam());
  const auto user = example_model(GetParam());
  ASSERT_EQ(user->n, builtin.n);
  ASSERT_EQ(user->position_rows, builtin.position_rows);
  ASSERT_EQ(user->velocity_rows, builtin.velocity_rows);
  ASSERT_EQ(user->params.size(), builtin.params.size());
  for (int j = 0; j < builtin.n; ++j) {
    EXPECT_EQ(user->q0[j], builtin.q0[j]) << "q0[" << j << "]";
    EXPECT_EQ(user->qd0[j], builtin.qd0[j]) << "qd0[" << j << "]";
  }
  // RK4 takes the same steps on the same arithmetic; DOPRI5's step control may round a step
  // differently, so its agreement is that of its tolerance.
  for (const Case c : {Case{Method::kRk4, Precision::kFp64, 1e-12, 1e-12},
                       Case{Method::kDopri5, Precision::kFp64, 1e-6, 1e-9},
                       Case{Method::kRk4, Precision::kFp32, 1e-4, 1e-4}}) {
    EnsembleSettings s = EnsembleSettings::for_model(builtin);
    s.method = c.method;
    s.precision = c.precision;
    s.rtol = s.atol = 1e-9;
    s.threads = 1;
    // Per system: in the AVX2 lanes the compiler fuses the generated code's multiply-adds, which
    // the interpreter, one operation at a time, cannot (slider_crank then differs by 1.2e-12).
    s.cpu_isa = CpuIsa::kScalar;
    BatchResults expected, got;
    run_ensemble_cpu(systems_of(builtin), s, expected);
    run_ensemble_cpu(systems_of(*user), s, got);
    SCOPED_TRACE(std::string(c.method == Method::kRk4 ? "rk4" : "dopri5") +
                 (c.precision == Precision::kFp64 ? " fp64" : " fp32"));
    for (int i = 0; i < expected.count; ++i) {
      ASSERT_EQ(got.status[i], expected.status[i]) << "system " << i;
      EXPECT_EQ(got.t[i], expected.t[i]);
      for (int j = 0; j < builtin.n; ++j) {
        EXPECT_LE(relative_difference(got.q_at(j, i), expected.q_at(j, i)), c.tolerance)
            << "q[" << j << "] of system " << i;
        EXPECT_LE(relative_difference(got.qd_at(j, i), expected.qd_at(j, i)), c.tolerance)
            << "qd[" << j << "] of system " << i;
      }
      for (int r = 0; r < builtin.residual_slots(); ++r) {
        // Residuals of rows that are kept are rounding-sized: alike to rounding.
        const double a = got.residual_at(r, i), b = expected.residual_at(r, i);
        EXPECT_LE(std::abs(a - b), c.tolerance * std::max(std::abs(a), std::abs(b)) + c.floor)
            << "residual slot " << r << " of system " << i;
      }
    }
  }
}

std::vector<std::string> catalogue_names() {
  std::vector<std::string> names;
  for (const ModelInfo& m : catalogue_info()) names.push_back(m.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllModels, CatalogueDefinitions, ::testing::ValuesIn(catalogue_names()));

}  // namespace
}  // namespace ukes
