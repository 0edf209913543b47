// NVRTC compiles the fused kernel of every example model (client/examples/models/) from its
// generated code, on the host alone (no GPU), against the headers embedded in the module: what
// a GPU run of a user model compiles (kernels/backend/cuda/compiled_kernels.cu). ptxas's figures
// for each are printed and must beat the interpreted kernel the GPU module would run the model in
// (gpu_user_bucket_for), whose figures are the committed table's (benchmarks/kernel_resources.tsv).
#include <gtest/gtest.h>

#ifdef UKES_HAVE_NVRTC

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "example_segments.hpp"  // UKES_EXAMPLE_SEGMENTS: the example models
#include "kernels/backend/cuda/jit/nvrtc_compiler.hpp"
#include "kernels/backend/device/system_kernels.hpp"
#include "kernels/models/catalogue.hpp"
#include "kernels/models/user/buckets.hpp"
#include "tests/support/example_models.hpp"

namespace ukes {
namespace {

struct Variant {
  bool fp64;
  Method method;
  bool general;
};

// The committed row of the interpreted kernel with this bucket and variant: {registers, stack}.
std::vector<int> interpreted_row(int bucket, const Variant& v) {
  const std::string kernel = "void ukes::cuda::system_kernel<ukes::FusedSystem<ukes::UserModel<" +
                             std::to_string(bucket) + ", ukes::InterpretedSegments>, " +
                             (v.fp64 ? "double" : "float") + ", (ukes::Method)" +
                             std::to_string(static_cast<int>(v.method)) + ", " +
                             (v.general ? "true" : "false") + ", false, false> >(";
  std::ifstream table(std::string(UKES_SOURCE_DIR) + "/benchmarks/kernel_resources.tsv");
  std::string line;
  while (std::getline(table, line)) {
    if (line.find(kernel) == std::string::npos) continue;
    std::istringstream fields(line);
    int registers = 0, stack = 0;
    fields >> registers >> stack;
    return {registers, stack};
  }
  return {};
}

class NvrtcCompile : public ::testing::TestWithParam<std::string> {};

TEST_P(NvrtcCompile, GeneratedKernelCompilesSmallerThanTheInterpreted) {
  const auto model = example_model(GetParam());
  const int bucket = gpu_user_bucket_for(model->user->bucket);
  for (const Variant v :
       {Variant{true, Method::kRk4, false}, Variant{false, Method::kDopri5, true}}) {
    jit::FusedKernelSpec spec;
    spec.bucket = bucket;
    spec.fp64 = v.fp64;
    spec.method = v.method;
    spec.general = v.general;
    spec.host_size = sizeof(FusedSystem<UserModel<4>, double, Method::kRk4, false>);
    spec.host_align = alignof(FusedSystem<UserModel<4>, double, Method::kRk4, false>);
    if (!v.fp64) {
      spec.host_size = sizeof(FusedSystem<UserModel<4>, float, Method::kDopri5, true>);
      spec.host_align = alignof(FusedSystem<UserModel<4>, float, Method::kDopri5, true>);
    }
    jit::CompiledKernel kernel;
    try {
      kernel = jit::compile_kernel(jit::fused_source(&model->user->program, spec), 90);
    } catch (const jit::JitError& e) {
      FAIL() << e.what();
    }
    EXPECT_FALSE(kernel.cubin.empty());
    const jit::KernelResources& r = kernel.resources;
    std::printf(
        "%s bucket %d %s %s%s: %d registers, %d B stack, %d/%d B spill stores/loads, "
        "compiled in %.1f s\n",
        GetParam().c_str(), bucket, v.fp64 ? "FP64" : "FP32",
        v.method == Method::kRk4 ? "RK4" : "DOPRI5", v.general ? " general" : "", r.registers,
        r.stack, r.spill_stores, r.spill_loads, kernel.compile_s);
    ASSERT_GT(r.registers, 0) << kernel.ptxas_report;
    const std::vector<int> interpreted = interpreted_row(bucket, v);
    ASSERT_EQ(interpreted.size(), 2u) << "no committed row for bucket " << bucket;
    EXPECT_LT(r.stack, interpreted[1]) << "the interpreted kernel's stack: " << interpreted[1];
  }
}

std::vector<std::string> example_names() {
#define UKES_EXAMPLE_NAME(name, bucket) #name,
  return {UKES_EXAMPLE_SEGMENTS(UKES_EXAMPLE_NAME)};
#undef UKES_EXAMPLE_NAME
}

INSTANTIATE_TEST_SUITE_P(ExampleModels, NvrtcCompile, ::testing::ValuesIn(example_names()),
                         [](const auto& param_info) { return param_info.param; });

// Kernels the CUDA module has only as compiled at run time (kernels/backend/device/
// system_kernels.hpp), for a built-in by its header and for a user model from its program: model
// `name`'s built-in in FP64 (kernel object Fp64Kernel, the method `options` names) and its
// definition in FP32 (Fp32Kernel, fp32_method), with the other options of `options`. ptxas's
// figures are printed, labelled `what`.
template <class Fp64Kernel, class Fp32Kernel>
void compile_built_in_and_definition(const std::string& name, const jit::FusedKernelSpec& options,
                                     Method fp32_method, const char* what) {
  const auto definition = example_model(name);
  const int bucket = gpu_user_bucket_for(definition->user->bucket);
  for (const bool built_in : {true, false}) {
    const bool fp64 = built_in;
    jit::FusedKernelSpec spec = options;
    if (built_in) {
      spec.model = name;
    } else {
      spec.bucket = bucket;
      spec.method = fp32_method;
    }
    spec.fp64 = fp64;
    spec.host_size = fp64 ? sizeof(Fp64Kernel) : sizeof(Fp32Kernel);
    spec.host_align = fp64 ? alignof(Fp64Kernel) : alignof(Fp32Kernel);
    jit::CompiledKernel kernel;
    try {
      kernel = jit::compile_kernel(
          jit::fused_source(built_in ? nullptr : &definition->user->program, spec), 90);
    } catch (const jit::JitError& e) {
      FAIL() << e.what();
    }
    EXPECT_FALSE(kernel.cubin.empty());
    const jit::KernelResources& r = kernel.resources;
    std::printf(
        "%s %s %s, %s: %d registers, %d B stack, %d/%d B spill stores/loads, compiled in %.1f "
        "s\n",
        name.c_str(),
        built_in ? "built-in" : ("definition, bucket " + std::to_string(bucket)).c_str(),
        fp64 ? "FP64" : "FP32", what, r.registers, r.stack, r.spill_stores, r.spill_loads,
        kernel.compile_s);
    EXPECT_GT(r.registers, 0) << kernel.ptxas_report;
  }
}

// Servo rows of a higher relative degree (docs/CONTROL.md quotes the figures): two of the four
// variants (about 20 s of NVRTC each here), the built-in in FP64 DOPRI5, the definition in FP32
// RK4.
TEST(NvrtcServoDerivatives, TheFlexibleJointsKernelCompilesAsBuiltInAndAsDefinition) {
  jit::FusedKernelSpec options;
  options.method = Method::kDopri5;
  options.general = options.servo_derivatives = true;
  compile_built_in_and_definition<
      FusedSystem<models::FlexibleJoint, double, Method::kDopri5, true, true>,
      FusedSystem<models::FlexibleJoint, float, Method::kRk4, true, true>>(
      "flexible_joint", options, Method::kRk4, "servo derivatives");
}

// The stiff method, whose Jacobian evaluates the whole right-hand side on duals
// (kernels/ensemble/stiff_system.hpp; docs/INTEGRATORS.md quotes the figures).
TEST(NvrtcStiff, TheFrictionRingsRosenbrockKernelCompilesAsBuiltInAndAsDefinition) {
  jit::FusedKernelSpec options;
  options.method = Method::kRosenbrock;
  compile_built_in_and_definition<
      FusedSystem<models::FrictionRing, double, Method::kRosenbrock, false>,
      FusedSystem<models::FrictionRing, float, Method::kRosenbrock, false>>(
      "friction_ring", options, Method::kRosenbrock, "rosenbrock");
}

// Events (docs/EVENTS.md quotes the figures): the root finder on DOPRI5's dense output and the
// event program's interpreter in the general kernel.
TEST(NvrtcEvents, TheScarasEventKernelCompilesAsBuiltInAndAsDefinition) {
  jit::FusedKernelSpec options;
  options.method = Method::kDopri5;
  options.general = options.events = true;
  compile_built_in_and_definition<
      FusedSystem<models::Scara, double, Method::kDopri5, true, false, true>,
      FusedSystem<models::Scara, float, Method::kDopri5, true, false, true>>(
      "scara", options, Method::kDopri5, "events");
}

TEST(NvrtcServoDerivatives, ASpecNamingNoModelIsRefused) {
  jit::FusedKernelSpec spec;
  spec.model = "no_such_model";
  EXPECT_THROW(jit::fused_source(nullptr, spec), std::invalid_argument);
  spec.model.clear();
  spec.bucket = 4;
  EXPECT_THROW(jit::fused_source(nullptr, spec), std::invalid_argument);
}

}  // namespace
}  // namespace ukes

#endif  // UKES_HAVE_NVRTC
