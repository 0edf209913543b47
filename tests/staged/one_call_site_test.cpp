// The fused GPU kernel's body for user models, integrate_with_one_call_site
// (kernels/staged/staged_system.hpp), run on the CPU against SystemKernel::run (the CPU backend):
// every per-system result and every trajectory sample must be the same to the bit, for a user
// model and every catalogue model, both methods, both precisions, assembly and projection.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/backend/cpu/cpu_backend.hpp"
#include "kernels/ensemble/to_run_settings.hpp"
#include "kernels/models/catalogue.hpp"
#include "kernels/models/user/user_model.hpp"
#include "kernels/staged/staged_system.hpp"
#include "staged/staged_support.hpp"
#include "support/example_models.hpp"

namespace ukes {
namespace {

template <class V>
bool same_bits(const std::vector<V>& a, const std::vector<V>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(V)) == 0;
}

template <class Model, class T>
void expect_identical(const ModelInfo& info, const EnsembleSettings& e) {
  const Batch batch = testing::perturbed_batch(info, 4);
  const std::vector<std::int32_t> recorded = {0, 2};
  BatchResults fused, one_site;
  fused.allocate(batch, e.samples, recorded);
  one_site.allocate(batch, e.samples, recorded);
  const RunSettings<T> s = to_run_settings<T>(e);
  run_batch_cpu<Model, T>(batch.view(), s, fused.view(), 1);
  const BatchOutputView out = one_site.view();
  for (int i = 0; i < batch.count; ++i)
    integrate_with_one_call_site<Model, T>(batch.view(), s, i, out);
  EXPECT_EQ(one_site.status, fused.status);
  EXPECT_EQ(one_site.steps, fused.steps);
  EXPECT_EQ(one_site.rejected, fused.rejected);
  EXPECT_GT(fused.steps[0], 0);
  for (const auto& [a, b] : {std::pair{&one_site.t, &fused.t},
                             {&one_site.q, &fused.q},
                             {&one_site.qd, &fused.qd},
                             {&one_site.residual_max, &fused.residual_max},
                             {&one_site.force_max, &fused.force_max},
                             {&one_site.inconsistency_max, &fused.inconsistency_max},
                             {&one_site.traj_q, &fused.traj_q},
                             {&one_site.traj_qd, &fused.traj_qd},
                             {&one_site.traj_residual, &fused.traj_residual},
                             {&one_site.traj_force, &fused.traj_force}})
    EXPECT_TRUE(same_bits(*a, *b));
}

template <class T>
EnsembleSettings half_a_second(const ModelInfo& info, Method method, bool assemble_and_project) {
  EnsembleSettings e = EnsembleSettings::for_model(info);
  e.method = method;
  e.precision = sizeof(T) == 8 ? Precision::kFp64 : Precision::kFp32;
  e.t_end = e.t0 + 0.5;
  e.samples = 6;
  if (method == Method::kRk4) e.dt = 1e-3;
  if (sizeof(T) == 4) e.rtol = e.atol = 1e-5;
  e.assemble = e.projection = assemble_and_project;
  return e;
}

template <class T>
void every_model(Method method, bool assemble_and_project) {
  for_each_model(Catalogue{}, [&]<class Model>() {
    SCOPED_TRACE(Model::kName);
    const ModelInfo& info = *find_model(Model::kName);
    expect_identical<Model, T>(info, half_a_second<T>(info, method, assemble_and_project));
  });
}

TEST(OneCallSite, Rk4Fp64IsTheFusedRunToTheBit) { every_model<double>(Method::kRk4, false); }
TEST(OneCallSite, Dopri5Fp64IsTheFusedRunToTheBit) { every_model<double>(Method::kDopri5, false); }
TEST(OneCallSite, Dopri5Fp32IsTheFusedRunToTheBit) { every_model<float>(Method::kDopri5, false); }
TEST(OneCallSite, AssemblyAndProjectionAreTheFusedRunToTheBit) {
  every_model<double>(Method::kDopri5, true);
}

// What the GPU runs it for: user models (scara's definition file, bucket 4).
TEST(OneCallSite, AUserModelIsTheFusedRunToTheBit) {
  const auto info = example_model("scara");
  ASSERT_EQ(info->user->bucket, 4);
  for (const Method method : {Method::kRk4, Method::kDopri5})
    expect_identical<UserModel<4>, double>(*info, half_a_second<double>(*info, method, true));
}

}  // namespace
}  // namespace ukes
