// Result files in-process: the streamed results document equals the in-memory one, and files
// appear only on commit (a PendingFile that is dropped leaves nothing behind).
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "service/engine/engine.hpp"
#include "service/results/atomic_file.hpp"
#include "service/results/results_json.hpp"
#include "service/results/trajectories_h5.hpp"
#include "service/runspec/run_spec.hpp"
#include "service/runspec/spec_text.hpp"

namespace ukes {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

class ResultFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ukes_files_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<std::string> files() const {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(dir_)) v.push_back(e.path().filename().string());
    return v;
  }
  fs::path dir_;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

TEST_F(ResultFiles, PendingFileAppearsOnlyOnCommit) {
  const std::string path = (dir_ / "a.txt").string();
  {
    PendingFile f = stage_text_file(path, "hello\n");
    EXPECT_TRUE(f.pending());
    EXPECT_EQ(files().size(), 1u);  // the hidden temporary only
    EXPECT_FALSE(fs::exists(path));
  }
  EXPECT_TRUE(files().empty());  // dropped: removed
  {
    PendingFile f = stage_text_file(path, "hello\n");
    f.commit();
    EXPECT_FALSE(f.pending());
  }
  EXPECT_EQ(files(), std::vector<std::string>{"a.txt"});
  EXPECT_EQ(slurp(path), "hello\n");
  // A replaced file changes in one step; a failed stage leaves the old one alone.
  {
    PendingFile f = stage_text_file(path, "second\n");
    EXPECT_EQ(slurp(path), "hello\n");
    f.commit();
  }
  EXPECT_EQ(slurp(path), "second\n");
  EXPECT_THROW(stage_text_file((dir_ / "missing" / "b.txt").string(), "x"), std::runtime_error);
  EXPECT_EQ(files(), std::vector<std::string>{"a.txt"});
  EXPECT_THROW(check_writable((dir_ / "missing" / "b.txt").string()), std::runtime_error);
  EXPECT_THROW(check_writable(dir_.string()), std::runtime_error);  // a directory
  EXPECT_NO_THROW(check_writable((dir_ / "c.json").string()));
}

TEST_F(ResultFiles, StreamedDocumentEqualsTheInMemoryOne) {
  const RunSpec spec = parse_run_spec(parse_spec_text(R"({
    "model": "duffing",
    "sweep": {"count": 6, "seed": 3, "vary": {"params.k1": {"values": [9, 10, 11]}}},
    "integrator": {"method": "rk4", "t_end": 1.0},
    "output": {"samples": 5, "trajectories": [4, 1]}})"));
  ExecuteOptions o;
  o.threads = 1;
  const RunOutcome out = execute(spec, o);
  EXPECT_EQ(out.backend, "cpu");
  EXPECT_EQ(out.threads, 1);
  // rk4 with dt = (t_end - t0) / 1000: 1000 steps per system.
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out.results.steps[static_cast<std::size_t>(i)], 1000);
  std::ostringstream os;
  write_results_json(os, spec, out);
  const json streamed = json::parse(os.str());
  EXPECT_EQ(streamed, results_json(spec, out));
  EXPECT_EQ(streamed.at("settings").at("method"), "rk4");
  EXPECT_EQ(streamed.at("settings").at("dt"), 0.001);
  EXPECT_EQ(streamed.at("ensemble").at("steps").at("max"), 1000.0);
  // Swept values are reported per system.
  const double k1 = streamed.at("systems")[2].at("sample").at("params.k1").get<double>();
  EXPECT_TRUE(k1 == 9 || k1 == 10 || k1 == 11);

  // Both writers stage invisibly and commit atomically.
  const std::string jpath = (dir_ / "r.json").string(), hpath = (dir_ / "t.h5").string();
  {
    PendingFile j = stage_results_json(jpath, spec, out);
    PendingFile h = stage_trajectories_h5(hpath, spec, out);
    EXPECT_FALSE(fs::exists(jpath));
    EXPECT_FALSE(fs::exists(hpath));
    EXPECT_EQ(files().size(), 2u);
  }
  EXPECT_TRUE(files().empty());
  {
    PendingFile j = stage_results_json(jpath, spec, out);
    PendingFile h = stage_trajectories_h5(hpath, spec, out);
    h.commit();
    j.commit();
  }
  EXPECT_EQ(json::parse(slurp(jpath)), streamed);
  const hid_t f = H5Fopen(hpath.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  const hid_t d = H5Dopen2(f, "q", H5P_DEFAULT);
  ASSERT_GE(d, 0);
  const hid_t s = H5Dget_space(d);
  hsize_t dims[3] = {};
  EXPECT_EQ(H5Sget_simple_extent_ndims(s), 3);
  H5Sget_simple_extent_dims(s, dims, nullptr);
  EXPECT_EQ(dims[0], 2u);
  EXPECT_EQ(dims[1], 5u);
  EXPECT_EQ(dims[2], 2u);
  std::vector<double> q(20);
  EXPECT_GE(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, q.data()), 0);
  EXPECT_EQ(q, out.results.traj_q);
  H5Sclose(s);
  H5Dclose(d);
  H5Fclose(f);
}

TEST_F(ResultFiles, ModelWithoutConstraintRowsAndNoTrajectories) {
  // projectile_polar has no rows: empty residual lists, zero-width residual datasets.
  const RunSpec spec = parse_run_spec(parse_spec_text(R"({"model": "projectile_polar",
    "output": {"samples": 3}})"));
  const RunOutcome out = execute(spec);
  const json doc = results_json(spec, out);
  EXPECT_EQ(doc.at("m"), 0);
  EXPECT_TRUE(doc.at("systems")[0].at("residual_max").at("position").empty());
  EXPECT_TRUE(doc.at("ensemble").at("residual_max").at("velocity").empty());
  const std::string hpath = (dir_ / "t.h5").string();
  PendingFile h = stage_trajectories_h5(hpath, spec, out);
  h.commit();
  const hid_t f = H5Fopen(hpath.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  const hid_t d = H5Dopen2(f, "residual", H5P_DEFAULT);
  ASSERT_GE(d, 0);
  const hid_t s = H5Dget_space(d);
  hsize_t dims[3] = {9, 9, 9};
  H5Sget_simple_extent_dims(s, dims, nullptr);
  EXPECT_EQ(dims[0], 0u);
  EXPECT_EQ(dims[1], 3u);
  EXPECT_EQ(dims[2], 0u);
  H5Sclose(s);
  H5Dclose(d);
  H5Fclose(f);
}

}  // namespace
}  // namespace ukes
