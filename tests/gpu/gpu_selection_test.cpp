// Backend selection on any machine: a build with the CUDA module starts and runs everywhere, `auto`
// falls back to the CPU with a reason, `gpu` fails with that reason, and no binary links CUDA.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "kernels/backend/backend.hpp"
#include "kernels/backend/gpu/gpu_backend.hpp"

namespace ukes {
namespace {

namespace fs = std::filesystem;

struct Output {
  int code = -1;
  std::string text;  // standard output and error together
};

Output shell(const std::string& command) {
  Output o;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen((command + " 2>&1").c_str(), "r"), pclose);
  if (!pipe) return o;
  std::array<char, 4096> buffer;
  while (std::fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) o.text += buffer.data();
  const int status = pclose(pipe.release());
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

const fs::path kBuild = UKES_BINARY_DIR;

TEST(GpuSelection, UnavailableAlwaysComesWithAReason) {
  const GpuAvailability& gpu = gpu_availability();
  if (gpu.available) {
    EXPECT_GT(std::string(gpu.info.name).size(), 0u);
    EXPECT_GE(10 * gpu.info.compute_major + gpu.info.compute_minor, 90);
  } else {
    EXPECT_FALSE(gpu.reason.empty());
  }
}

TEST(GpuSelection, AutoFallsBackToTheCpuAndGpuFailsSayingWhy) {
  const GpuAvailability& gpu = gpu_availability();
  EXPECT_EQ(resolve_device(Device::kCpu).device, Device::kCpu);
  const ResolvedDevice automatic = resolve_device(Device::kAuto);
  if (gpu.available) {
    EXPECT_EQ(automatic.device, Device::kGpu);
    EXPECT_EQ(resolve_device(Device::kGpu).device, Device::kGpu);
    return;
  }
  EXPECT_EQ(automatic.device, Device::kCpu);
  EXPECT_EQ(automatic.why, gpu.reason);
  try {
    resolve_device(Device::kGpu);
    ADD_FAILURE() << "gpu resolved without a usable GPU";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(gpu.reason), std::string::npos) << e.what();
  }
  const ModelInfo& duffing = *find_model("duffing");
  const Batch batch = Batch::defaults(duffing, 4);
  BatchResults r;
  EXPECT_THROW(run_ensemble_gpu(batch, EnsembleSettings::for_model(duffing), r),
               std::runtime_error);
}

#ifdef UKES_BUILT_WITH_CUDA
TEST(GpuSelection, TheModuleIsBuiltAndLoadsWithoutADriver) {
  const GpuAvailability& gpu = gpu_availability();
  ASSERT_FALSE(gpu.module.empty()) << gpu.reason;
  EXPECT_TRUE(fs::exists(gpu.module));
  // Loading worked: the reason, if any, comes from the CUDA runtime's probe, not from dlopen.
  if (!gpu.available) {
    EXPECT_EQ(gpu.reason.find("cannot load"), std::string::npos) << gpu.reason;
  }
}

TEST(GpuSelection, TheModuleNeverLinksTheDriver) {
  const Output needed = shell("readelf -d '" + (kBuild / "libukes_cuda.so").string() + "'");
  ASSERT_EQ(needed.code, 0) << needed.text;
  EXPECT_NE(needed.text.find("libcusolver"), std::string::npos) << needed.text;
  EXPECT_EQ(needed.text.find("libcuda.so"), std::string::npos) << needed.text;
  EXPECT_EQ(needed.text.find("libcudart.so"), std::string::npos) << needed.text;  // static
}
#endif

TEST(GpuSelection, NoExecutableLinksCuda) {
  for (const char* exe : {"ukes", "ukes-server"}) {
    const Output needed = shell("readelf -d '" + (kBuild / exe).string() + "'");
    ASSERT_EQ(needed.code, 0) << exe << ": " << needed.text;
    EXPECT_EQ(needed.text.find("libcuda"), std::string::npos) << exe;
    EXPECT_EQ(needed.text.find("libcusolver"), std::string::npos) << exe;
  }
}

// The client, in a process of its own so that the environment applies to its probe.
Output ukes_run(const std::string& env, const std::string& spec) {
  const fs::path dir =
      fs::temp_directory_path() / ("ukes_gpu_selection_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "spec.json";
  FILE* f = std::fopen(file.c_str(), "w");
  std::fputs(spec.c_str(), f);
  std::fclose(f);
  const Output o =
      shell("env " + env + " '" + (kBuild / "ukes").string() + "' run '" + file.string() + "'");
  fs::remove_all(dir);
  return o;
}

TEST(GpuSelection, DisablingTheGpuMakesAutoRunOnTheCpuWithOneLineSayingWhy) {
  const Output o = ukes_run("UKES_DISABLE_GPU=1", R"({"model": "duffing"})");
  ASSERT_EQ(o.code, 0) << o.text;
  EXPECT_NE(o.text.find("ukes: running on the CPU: UKES_DISABLE_GPU is set"), std::string::npos)
      << o.text;
  EXPECT_NE(o.text.find("on cpu"), std::string::npos) << o.text;
}

TEST(GpuSelection, GpuRequestedWithoutOneIsASpecErrorNamingDevice) {
  const Output o = ukes_run("UKES_DISABLE_GPU=1", R"({"model": "duffing", "device": "gpu"})");
  EXPECT_EQ(o.code, 2) << o.text;
  EXPECT_NE(o.text.find("device: gpu requested but no GPU can be used here: UKES_DISABLE_GPU"),
            std::string::npos)
      << o.text;
}

TEST(GpuSelection, AMissingModuleIsAReasonNotACrash) {
  const Output o =
      ukes_run("UKES_CUDA_MODULE=/nonexistent/libukes_cuda.so", R"({"model": "duffing"})");
  ASSERT_EQ(o.code, 0) << o.text;
  EXPECT_NE(o.text.find("running on the CPU: the CUDA module"), std::string::npos) << o.text;
}

TEST(GpuSelection, CpuRequestedPrintsNoFallbackLine) {
  const Output o = ukes_run("UKES_DISABLE_GPU=1", R"({"model": "duffing", "device": "cpu"})");
  ASSERT_EQ(o.code, 0) << o.text;
  EXPECT_EQ(o.text.find("running on the CPU"), std::string::npos) << o.text;
}

}  // namespace
}  // namespace ukes
