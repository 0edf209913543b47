// `ukes run` over several GPUs of one process (service/engine/engine.cpp, SliceDevices), on the
// host emulation of the GPU module (kernels/backend/host_gpu/module.cpp), which reports as many
// devices as UKES_HOST_GPU_DEVICES asks (each one this machine) and loses one on demand
// (UKES_HOST_GPU_LOSE_DEVICE). Whichever GPUs run a system, its results are one GPU's to the bit.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tests/client/cli_support.hpp"
#include "tests/support/server_process.hpp"

namespace ukes {
namespace {

#ifdef UKES_HOST_GPU_MODULE

namespace fs = std::filesystem;
using namespace cli_test;
using json = nlohmann::json;

// The environment of a `ukes` whose GPU module is the emulation with `devices` devices; chunks of
// 64 systems, so that each device's slice takes several turns of its pipeline.
std::string emulated_gpus(int devices, const std::string& more = "") {
  return std::string("UKES_DISABLE_GPU=0 UKES_CUDA_MODULE=") + UKES_HOST_GPU_MODULE +
         " UKES_HOST_GPU_DEVICES=" + std::to_string(devices) + " UKES_HOST_GPU_MAX_CHUNK=64 " +
         more;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class GpuDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ukes_devices_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    spec("gpu.json", "gpu");
    spec("auto.json", "auto");
    const Result one = run_ukes(dir_, "run gpu.json --out one.json --h5 one.h5", emulated_gpus(1));
    ASSERT_EQ(one.code, 0) << one.err;
    one_ = json::parse(read_file(dir_ / "one.json"));
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A scara sweep of 301 systems with three recorded trajectories on `device`.
  void spec(const char* name, const char* device) {
    write_file(dir_ / name, std::string(R"({"model": "scara", "device": ")") + device + R"(",
      "sweep": {"count": 301, "seed": 3, "vary": {"params.m4": {"uniform": [0.5, 1.5]}}},
      "integrator": {"method": "rk4", "t_end": 0.2, "dt": 0.002},
      "output": {"samples": 5, "trajectories": [0, 150, 300]}})");
  }

  // Whether `name` (JSON and HDF5) holds what the one-GPU run wrote.
  void expect_one_gpu_results(const std::string& name) {
    const json got = json::parse(read_file(dir_ / (name + ".json")));
    EXPECT_EQ(got.at("systems"), one_.at("systems"));
    EXPECT_EQ(got.at("ensemble"), one_.at("ensemble"));
    const H5File one_h5((dir_ / "one.h5").string()), h5((dir_ / (name + ".h5")).string());
    ASSERT_GE(h5.id, 0);
    for (const char* field : {"q", "qd", "residual", "force"}) {
      EXPECT_FALSE(read_dataset(one_h5.id, field).empty()) << field;
      EXPECT_EQ(read_dataset(h5.id, field), read_dataset(one_h5.id, field)) << field;
    }
  }

  fs::path dir_;
  json one_;
};

TEST_F(GpuDevices, TwoAndThreeGpusWriteTheFilesOneGpuWrites) {
  for (const int devices : {2, 3}) {
    SCOPED_TRACE(std::to_string(devices) + " GPUs");
    const Result r =
        run_ukes(dir_, "run gpu.json --out many.json --h5 many.h5", emulated_gpus(devices));
    ASSERT_EQ(r.code, 0) << r.err;
    expect_one_gpu_results("many");
  }
}

// Device 2 breaks on its first slice: the other two finish the run with the same results, and
// the run says so. That the loss is seen at all shows the run gave device 2 a slice.
TEST_F(GpuDevices, ALostGpuHandsItsSlicesToTheOthersUnderAuto) {
  const Result r = run_ukes(dir_, "run auto.json --out lost.json --h5 lost.h5",
                            emulated_gpus(3, "UKES_HOST_GPU_LOSE_DEVICE=2"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.err, "ukes: GPU 2 was lost at system ")) << r.err;
  EXPECT_TRUE(has(r.err, "its slices went to the other GPUs")) << r.err;
  EXPECT_TRUE(has(r.err, "emulated loss of device 2")) << r.err;
  EXPECT_FALSE(has(r.err, "on the CPU")) << r.err;
  expect_one_gpu_results("lost");
}

TEST_F(GpuDevices, ALostGpuFailsARunThatAskedForTheGpu) {
  const Result r = run_ukes(dir_, "run gpu.json --out lost.json",
                            emulated_gpus(2, "UKES_HOST_GPU_LOSE_DEVICE=1"));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(has(r.err, "GPU 1 run failed, and the GPU with it: emulated loss of device 1"))
      << r.err;
}

TEST_F(GpuDevices, DevicesChooseTheGpus) {
  const std::string lose_2 = emulated_gpus(3, "UKES_HOST_GPU_LOSE_DEVICE=2");
  const Result without_2 =
      run_ukes(dir_, "run auto.json --devices 0,1 --out a.json --h5 a.h5", lose_2);
  ASSERT_EQ(without_2.code, 0) << without_2.err;
  EXPECT_FALSE(has(without_2.err, "lost")) << "GPU 2 ran a slice: " << without_2.err;
  expect_one_gpu_results("a");
  const Result with_2 =
      run_ukes(dir_, "run auto.json --devices 2,0 --out b.json --h5 b.h5", lose_2);
  ASSERT_EQ(with_2.code, 0) << with_2.err;
  EXPECT_TRUE(has(with_2.err, "ukes: GPU 2 was lost at system ")) << with_2.err;
  expect_one_gpu_results("b");

  const Result absent = run_ukes(dir_, "run gpu.json --devices 0,3", emulated_gpus(3));
  EXPECT_EQ(absent.code, 2) << absent.err;
  EXPECT_TRUE(has(absent.err, "device_ids[1]: no GPU 3 here (3 found)")) << absent.err;
  const Result twice = run_ukes(dir_, "run gpu.json --devices 1,1", emulated_gpus(3));
  EXPECT_EQ(twice.code, 2) << twice.err;
  EXPECT_TRUE(has(twice.err, "device_ids[1]: GPU 1 is listed twice")) << twice.err;
  const Result words = run_ukes(dir_, "run gpu.json --devices first", emulated_gpus(3));
  EXPECT_EQ(words.code, 2) << words.err;
  EXPECT_TRUE(has(words.err, "--devices: give GPU ordinals")) << words.err;
}

// This process's environment for a server it starts (ServerProcess passes it on): three
// emulated GPUs, GPU 1 broken from its first run; restored when it goes.
class EmulatedGpusForServers {
 public:
  EmulatedGpusForServers() {
    for (const auto& [name, value] : variables_) setenv(name, value.c_str(), 1);
  }
  ~EmulatedGpusForServers() {
    for (const auto& [name, value] : variables_) unsetenv(name);
  }

 private:
  const std::vector<std::pair<const char*, std::string>> variables_ = {
      {"UKES_DISABLE_GPU", "0"},
      {"UKES_CUDA_MODULE", UKES_HOST_GPU_MODULE},
      {"UKES_HOST_GPU_DEVICES", "3"},
      {"UKES_HOST_GPU_MAX_CHUNK", "64"},
      {"UKES_HOST_GPU_LOSE_DEVICE", "1"}};
};

// A server's --devices: its jobs use those GPUs alone (GPU 1, outside them, would break on its
// first slice), a job naming another is refused, and a list naming a GPU that is not there, or
// one GPU twice, stops the server at start.
TEST_F(GpuDevices, AServersDevicesAreTheOnlyGpusItsJobsUse) {
  const EmulatedGpusForServers gpus;
  testing::ServerProcess server({"--device", "auto", "--devices", "0,2"});
  const Result info = run_ukes(dir_, "info --server " + server.address());
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_TRUE(has(info.out, "gpu: 2 x ")) << info.out;
  const Result r =
      run_ukes(dir_, "run auto.json --server " + server.address() + " --out s.json --h5 s.h5");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(has(server.log_text(), "job_gpu_lost"))
      << "GPU 1 ran a slice: " << server.log_text();
  EXPECT_FALSE(has(server.log_text(), "emulated loss")) << server.log_text();
  expect_one_gpu_results("s");
  const Result other = run_ukes(dir_, "run auto.json --devices 1 --server " + server.address());
  EXPECT_EQ(other.code, 2) << other.err;
  EXPECT_TRUE(has(other.err, "device_ids[0]: GPU 1 is not among the server's")) << other.err;

  for (const char* wrong : {"0,3", "2,2"}) {
    try {
      testing::ServerProcess refused({"--device", "auto", "--devices", wrong});
      ADD_FAILURE() << "--devices " << wrong << " started a server";
    } catch (const std::runtime_error& e) {
      EXPECT_TRUE(has(e.what(), "ukes-server: --devices: ")) << e.what();
    }
  }
}

#endif  // UKES_HOST_GPU_MODULE

}  // namespace
}  // namespace ukes
