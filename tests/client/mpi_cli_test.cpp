// `mpirun -n K ukes run` (client/mpi_run.cpp): 1 to 4 ranks on this machine (oversubscribed)
// write the files one process writes, systems and statistics to the bit; a bad spec is reported
// once, by rank 0, and fails every rank.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/client/cli_support.hpp"

namespace ukes {
namespace {

namespace fs = std::filesystem;
using namespace cli_test;
using json = nlohmann::json;

#ifdef UKES_MPIEXEC

// `mpirun -n RANKS ukes ARGS` in `dir` (as root too: CI's containers run as root).
Result run_mpi(const fs::path& dir, int ranks, const std::string& args) {
  const std::string line = "cd " + quoted(dir.string()) +
                           " && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
                           " UKES_DISABLE_GPU=1 " +
                           quoted(UKES_MPIEXEC) + " --oversubscribe -n " + std::to_string(ranks) +
                           " " + quoted(std::string(UKES_BINARY_DIR) + "/ukes") + " " + args +
                           " > mpi.out 2> mpi.err < /dev/null";
  const int status = std::system(line.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(dir / "mpi.out");
  r.err = read_file(dir / "mpi.err");
  return r;
}

class MpiCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ukes_mpi_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(MpiCli, RanksWriteTheFilesOneProcessWrites) {
  write_file(dir_ / "spec.json", R"({
    "model": "four_bar", "device": "cpu",
    "sweep": {"count": 103, "seed": 4, "sampler": "sobol",
              "vary": {"params.tau": {"uniform": [-1, 1]}, "q0[0]": {"normal": [0.5, 0.01]}}},
    "integrator": {"method": "dopri5", "t_end": 0.2},
    "output": {"samples": 6, "trajectories": [102, 7, 51, 0]}
  })");
  const Result one = run_ukes(dir_, "run spec.json --threads 1 --out one.json --h5 one.h5");
  ASSERT_EQ(one.code, 0) << one.err;
  const json expected = json::parse(read_file(dir_ / "one.json"));
  const H5File one_h5((dir_ / "one.h5").string());
  ASSERT_GE(one_h5.id, 0);
  for (const int ranks : {1, 2, 3, 4}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    const Result r = run_mpi(dir_, ranks, "run spec.json --out mpi.json --h5 mpi.h5");
    ASSERT_EQ(r.code, 0) << r.err;
    const json got = json::parse(read_file(dir_ / "mpi.json"));
    EXPECT_EQ(got.at("systems"), expected.at("systems"));
    EXPECT_EQ(got.at("ensemble"), expected.at("ensemble"));
    const H5File mpi_h5((dir_ / "mpi.h5").string());
    ASSERT_GE(mpi_h5.id, 0);
    for (const char* name : {"system_ids", "q", "qd", "residual", "force", "params"}) {
      EXPECT_FALSE(read_dataset(one_h5.id, name).empty()) << name;
      EXPECT_EQ(read_dataset(mpi_h5.id, name), read_dataset(one_h5.id, name)) << name;
    }
    // One summary, from rank 0.
    EXPECT_EQ(r.out.find("count 103, ok 103"), r.out.rfind("count 103, ok 103")) << r.out;
    EXPECT_NE(r.out.find("count 103, ok 103"), std::string::npos) << r.out;
  }
}

TEST_F(MpiCli, ABadSpecIsReportedOnceAndFailsEveryRank) {
  write_file(dir_ / "bad.json", R"({"model": "duffing", "integrator": {"rtol": -1}})");
  const Result r = run_mpi(dir_, 3, "run bad.json");
  EXPECT_EQ(r.code, 2);
  const std::string what = "integrator.rtol";
  ASSERT_NE(r.err.find(what), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(what), r.err.rfind(what)) << r.err;
}

#else

TEST(MpiCli, NeedsMpi) {
  GTEST_SKIP() << "built without MPI (scripts/install-deps.sh installs it)";
}

#endif

}  // namespace
}  // namespace ukes
