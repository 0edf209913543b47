// Backend selection on any machine: a build with the CUDA module starts and runs everywhere, `auto`
// falls back to the CPU with a reason, `gpu` fails with that reason, and no binary links CUDA.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/backend/backend.hpp"
#include "kernels/backend/gpu/gpu_backend.hpp"
#include "tests/support/gpu_support.hpp"
#include "tests/support/server_process.hpp"

namespace ukes {
namespace {

namespace fs = std::filesystem;
using testing::Output;
using testing::shell;

const fs::path kBuild = UKES_BINARY_DIR;

TEST(GpuSelection, UnavailableAlwaysComesWithAReason) {
  const GpuAvailability gpu = gpu_availability();
  if (gpu.available) {
    EXPECT_GT(std::string(gpu.info.name).size(), 0u);
    EXPECT_GE(10 * gpu.info.compute_major + gpu.info.compute_minor, 90);
  } else {
    EXPECT_FALSE(gpu.reason.empty());
  }
}

TEST(GpuSelection, AutoFallsBackToTheCpuAndGpuFailsSayingWhy) {
  const GpuAvailability gpu = gpu_availability();
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
  const GpuAvailability gpu = gpu_availability();
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

// ---- Failures of a GPU that was found: tests/gpu/fake_module/ stands in for the CUDA module.

std::string fake_gpu(const std::string& mode) {
  return std::string("UKES_CUDA_MODULE=") + UKES_FAKE_GPU_MODULE + " UKES_FAKE_GPU=" + mode;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

constexpr const char* kIllegalAddress = "an illegal memory access was encountered";
// What run_ensemble_gpu says when the fake module reports the device lost.
const std::string kGpuLost = std::string("GPU 0 run failed, and the GPU with it: ") +
                             "cudaStreamSynchronize: " + kIllegalAddress;

TEST(GpuFailure, TheDriverRequirementIsOneLineSayingWhatToDo) {
  EXPECT_EQ(driver_requirement_problem(13000, 13000), "");
  EXPECT_EQ(driver_requirement_problem(13010, 13000), "");
  EXPECT_EQ(driver_requirement_problem(13000, 13010), "");  // minor version compatibility
  EXPECT_EQ(driver_requirement_problem(12090, 13000),
            "the NVIDIA driver supports CUDA 12.9 only; this build of ukes needs CUDA 13.0 "
            "(NVIDIA driver R580 or newer): update the driver, or run with device cpu");
  EXPECT_EQ(driver_requirement_problem(0, 13000),
            "no NVIDIA driver found; this build of ukes needs CUDA 13.0 (NVIDIA driver R580 or "
            "newer)");
  EXPECT_EQ(cuda_version_text(12040), "12.4");
}

TEST(GpuFailure, AnOldDriverIsTheReasonAutoRunsOnTheCpu) {
  const Output o = ukes_run(fake_gpu("old_driver"), R"({"model": "duffing"})");
  ASSERT_EQ(o.code, 0) << o.text;
  EXPECT_TRUE(has(o.text,
                  "ukes: running on the CPU: the NVIDIA driver supports CUDA 12.4 only; "
                  "this build of ukes needs CUDA 13.0 (NVIDIA driver R580 or newer)"))
      << o.text;
}

TEST(GpuFailure, AModuleOfOtherLayoutsIsRefusedAtLoad) {
  const Output o = ukes_run(fake_gpu("layout"), R"({"model": "duffing"})");
  ASSERT_EQ(o.code, 0) << o.text;
  EXPECT_TRUE(has(o.text, "was built for another version of ukes (module ABI " +
                              std::to_string(kGpuModuleAbi) + ", expected " +
                              std::to_string(kGpuModuleAbi) +
                              "; the layouts of the types it shares differ): rebuild it"))
      << o.text;
  EXPECT_TRUE(has(o.text, "on cpu")) << o.text;
}

TEST(GpuFailure, ABrokenGpuUnderAnAutoRunHandsTheRunToTheCpu) {
  const Output o = ukes_run(fake_gpu("lost"), R"({"model": "duffing"})");
  ASSERT_EQ(o.code, 0) << o.text;
  EXPECT_TRUE(has(o.text, "ukes: running on the CPU: " + kGpuLost)) << o.text;
  EXPECT_TRUE(has(o.text, "on cpu")) << o.text;
}

TEST(GpuFailure, ABrokenGpuFailsARunThatAskedForTheGpu) {
  const Output o = ukes_run(fake_gpu("lost"), R"({"model": "duffing", "device": "gpu"})");
  EXPECT_EQ(o.code, 1) << o.text;
  EXPECT_TRUE(has(o.text, kIllegalAddress)) << o.text;
  EXPECT_FALSE(has(o.text, "on cpu")) << o.text;
}

TEST(GpuFailure, ARunThatFailsAloneIsNotRetriedAndLeavesTheGpuUsable) {
  const Output o = ukes_run(fake_gpu("failed"), R"({"model": "duffing"})");
  EXPECT_EQ(o.code, 1) << o.text;
  EXPECT_TRUE(has(o.text, "GPU run failed: cudaMalloc: out of memory")) << o.text;
  EXPECT_FALSE(has(o.text, "given up")) << o.text;
}

// Sets environment variables for the servers this test starts, and restores them.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, std::string>> values) {
    for (const auto& [name, value] : values) {
      const char* old = std::getenv(name);
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      setenv(name, value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_)
      value ? setenv(name, value->c_str(), 1) : unsetenv(name);
  }

 private:
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

Output ukes_remote(const std::string& args) {
  return shell("'" + (kBuild / "ukes").string() + "' " + args);
}

TEST(GpuFailure, AServerWhoseGpuBreaksFinishesAutoJobsOnTheCpuAndRefusesGpuJobs) {
  const ScopedEnv env{{"UKES_CUDA_MODULE", UKES_FAKE_GPU_MODULE}, {"UKES_FAKE_GPU", "lost"}};
  testing::ServerProcess server({"--device", "auto", "--threads", "1"});
  const std::string at = " --server " + server.address();
  EXPECT_TRUE(has(ukes_remote("info" + at).text, "fake GPU")) << "the fake GPU was not loaded";

  const fs::path dir = server.dir() / "specs";
  fs::create_directories(dir);
  const auto spec = [&](const char* name, const char* text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  const std::string sweep = spec("auto.json", R"({"model": "duffing", "sweep": {"count": 50}})");
  const Output first = ukes_remote("run '" + sweep + "'" + at);
  ASSERT_EQ(first.code, 0) << first.text;
  EXPECT_TRUE(has(first.text, ": systems from 0 on ran on the CPU: " + kGpuLost)) << first.text;
  EXPECT_TRUE(has(first.text, "count 50, ok 50")) << first.text;

  const Output info = ukes_remote("info" + at);
  EXPECT_TRUE(has(info.text, "GPU 0 failed earlier in this process")) << info.text;
  const Output second = ukes_remote("run '" + sweep + "'" + at);
  ASSERT_EQ(second.code, 0) << second.text;
  EXPECT_FALSE(has(second.text, "ran on the CPU")) << "the second job started on the CPU";
  const Output gpu = ukes_remote(
      "run '" + spec("gpu.json", R"({"model": "duffing", "device": "gpu"})") + "'" + at);
  EXPECT_EQ(gpu.code, 2) << gpu.text;
  EXPECT_TRUE(has(gpu.text, "device: gpu requested but no GPU can be used here: GPU 0 failed"))
      << gpu.text;
  EXPECT_TRUE(has(server.log_text(), "\"job_gpu_fallback\""));
}

TEST(GpuSelection, CpuRequestedPrintsNoFallbackLine) {
  const Output o = ukes_run("UKES_DISABLE_GPU=1", R"({"model": "duffing", "device": "cpu"})");
  ASSERT_EQ(o.code, 0) << o.text;
  EXPECT_EQ(o.text.find("running on the CPU"), std::string::npos) << o.text;
}

}  // namespace
}  // namespace ukes
