// The host's GPU branches end to end: `ukes run` in-process and a ukes-server, both with
// `device: gpu`, against the same runs on the CPU, and a cancelled GPU run. Needs a GPU: without
// one every test here is skipped. CI runs them on the host emulation of the GPU module
// (libukes_host_gpu.so, ctest's HostGpu: tests), whose chunks are small, so a job there takes
// many turns of the module's pipeline and many streamed chunks.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "kernels/backend/gpu/gpu_backend.hpp"
#include "kernels/core/cancel.hpp"
#include "kernels/ensemble/batch_layout.hpp"
#include "kernels/models/model_info.hpp"
#include "kernels/sweep/sweep.hpp"
#include "tests/support/gpu_support.hpp"
#include "tests/support/server_process.hpp"

namespace ukes {
namespace {

namespace fs = std::filesystem;
using testing::Output;
using testing::shell;

const fs::path kBuild = UKES_BINARY_DIR;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class GpuService : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ukes_gpu_service_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A varied scara sweep on `device`, RK4 (fixed steps: every backend takes the same ones).
  std::string spec(const std::string& device) {
    const fs::path file = dir_ / (device + ".json");
    std::ofstream(file) << R"({"model": "scara", "device": ")" << device << R"(",
      "sweep": {"count": 300, "seed": 3, "vary": {"params.m4": {"uniform": [0.1, 0.4]},
                                                  "q0[0]": {"normal": [0.0, 0.01]}}},
      "assemble": true,
      "integrator": {"method": "rk4", "dt": 1e-3, "t_end": 0.5},
      "output": {"samples": 5, "trajectories": "first:3"}})";
    return file.string();
  }

  // `ukes run SPEC ARGS --out FILE` under `env`; returns the results JSON.
  nlohmann::json run(const std::string& env, const std::string& spec_file, const std::string& args,
                     const std::string& out_name) {
    const fs::path out = dir_ / out_name;
    const Output o = shell("env " + env + " '" + (kBuild / "ukes").string() + "' run '" +
                           spec_file + "' " + args + " --out '" + out.string() + "'");
    last_ = o.text;
    EXPECT_EQ(o.code, 0) << o.text;
    std::ifstream in(out);
    return in ? nlohmann::json::parse(in) : nlohmann::json();
  }

  // Same statuses and final states to rounding, system by system.
  static void expect_same_systems(const nlohmann::json& gpu, const nlohmann::json& cpu) {
    ASSERT_EQ(gpu["systems"].size(), cpu["systems"].size());
    ASSERT_EQ(gpu["systems"].size(), 300u);
    for (std::size_t i = 0; i < cpu["systems"].size(); ++i) {
      const nlohmann::json& g = gpu["systems"][i];
      const nlohmann::json& c = cpu["systems"][i];
      ASSERT_EQ(g["id"], c["id"]);
      ASSERT_EQ(g["status"], c["status"]) << "system " << i;
      EXPECT_EQ(g["steps"], c["steps"]) << "system " << i;
      for (std::size_t j = 0; j < c["q"].size(); ++j)
        EXPECT_NEAR(g["q"][j].get<double>(), c["q"][j].get<double>(), 1e-12) << "system " << i;
    }
    EXPECT_EQ(gpu["ensemble"]["ok"], cpu["ensemble"]["ok"]);
  }

  fs::path dir_;
  std::string last_;  // the last command's output
};

TEST_F(GpuService, InProcessGpuRunsMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const nlohmann::json cpu = run("UKES_DISABLE_GPU=1", spec("cpu"), "", "cpu.json");
  const nlohmann::json gpu = run("", spec("gpu"), "", "gpu.json");
  EXPECT_TRUE(has(last_, "on gpu")) << last_;
  EXPECT_EQ(gpu["backend"], "gpu");
  expect_same_systems(gpu, cpu);
}

TEST_F(GpuService, AServerRunsGpuJobsAndStreamsWhatTheCpuComputes) {
  SKIP_WITHOUT_GPU();
  testing::ServerProcess server({"--device", "gpu", "--threads", "1"});
  const std::string at = std::string(" --server ").append(server.address());
  const Output info =
      shell(std::string("'").append((kBuild / "ukes").string()).append("' info").append(at));
  EXPECT_TRUE(has(info.text, gpu_availability().info.name)) << info.text;
  const nlohmann::json cpu = run("UKES_DISABLE_GPU=1", spec("cpu"), "", "cpu.json");
  const nlohmann::json gpu = run("", spec("gpu"), at, "remote.json");
  expect_same_systems(gpu, cpu);
  EXPECT_FALSE(has(server.log_text(), "\"job_gpu_fallback\"")) << server.log_text();
}

// A stop request reaches the kernels through the module's stop word while the host waits for a
// chunk: systems stop within kStopPollInterval steps, however long their integration.
TEST(GpuCancel, ARunStoppedWhileOnTheGpuEndsItsSystemsCancelled) {
  SKIP_WITHOUT_GPU();
  const ModelInfo& m = *find_model("duffing");
  const Batch batch = Batch::defaults(m, 256);
  EnsembleSettings s = EnsembleSettings::for_model(m);
  s.method = Method::kRk4;
  s.dt = 1e-6;
  s.t_end = 1e3;  // 1e9 steps per system: only a stop ends this run
  CancelFlag cancel;
  s.cancel = &cancel;
  BatchResults out;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel.request();
  });
  const auto start = std::chrono::steady_clock::now();
  run_ensemble_gpu(batch, s, out);
  stopper.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 30.0);
  int cancelled = 0;
  for (const std::int32_t status : out.status)
    if (status == static_cast<std::int32_t>(Status::kCancelled)) ++cancelled;
  EXPECT_GT(cancelled, 0);
}

}  // namespace
}  // namespace ukes
