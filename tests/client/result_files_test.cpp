// Result files in-process: the results document holds every system's values, the binary results
// file every field of the record, and files appear only on commit (a PendingFile that is dropped
// leaves nothing behind).
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "service/engine/engine.hpp"
#include "service/results/atomic_file.hpp"
#include "service/results/results_h5.hpp"
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
  // Every system's line holds its results (numbers read back to the bit).
  const BatchResults& r = out.results;
  for (int i = 0; i < r.count; ++i) {
    const json& sj = streamed.at("systems")[static_cast<std::size_t>(i)];
    const auto ui = static_cast<std::size_t>(i);
    EXPECT_EQ(sj.at("id"), i);
    EXPECT_EQ(sj.at("status"), status_name(static_cast<Status>(r.status[ui])));
    EXPECT_EQ(sj.at("t").get<double>(), r.t[ui]);
    for (int j = 0; j < r.n; ++j) {
      EXPECT_EQ(sj.at("q")[static_cast<std::size_t>(j)].get<double>(), r.q_at(j, i));
      EXPECT_EQ(sj.at("qd")[static_cast<std::size_t>(j)].get<double>(), r.qd_at(j, i));
    }
    EXPECT_EQ(sj.at("residual_max").at("position")[0].get<double>(), r.residual_at(0, i));
    EXPECT_EQ(sj.at("residual_max").at("position_rate")[0].get<double>(), r.residual_at(1, i));
    EXPECT_TRUE(sj.at("residual_max").at("velocity").empty());
    EXPECT_EQ(sj.at("force_max").get<double>(), r.force_max[ui]);
    EXPECT_EQ(sj.at("inconsistency_max").get<double>(), r.inconsistency_max[ui]);
    EXPECT_EQ(sj.at("steps"), r.steps[ui]);
    EXPECT_EQ(sj.at("rejected"), r.rejected[ui]);
    EXPECT_TRUE(sj.at("t").is_number_float());  // 1.0, not 1: Python reads a float
  }
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

// Reads dataset `name` whole, as T (native memory type `type`); its dimensions into `dims`.
template <class T>
std::vector<T> read_dataset(hid_t f, const char* name, hid_t type, std::vector<hsize_t>& dims,
                            int* filters = nullptr) {
  const hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  EXPECT_GE(d, 0) << name;
  const hid_t s = H5Dget_space(d);
  dims.assign(static_cast<std::size_t>(H5Sget_simple_extent_ndims(s)), 0);
  H5Sget_simple_extent_dims(s, dims.data(), nullptr);
  std::size_t count = 1;
  for (auto x : dims) count *= static_cast<std::size_t>(x);
  std::vector<T> values(count);
  EXPECT_GE(H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  if (filters != nullptr) {
    const hid_t p = H5Dget_create_plist(d);
    *filters = H5Pget_nfilters(p);
    H5Pclose(p);
  }
  H5Sclose(s);
  H5Dclose(d);
  return values;
}

// Component-major [width][count] arrays as the file's system-major [count][width].
template <class T>
std::vector<T> system_major(const std::vector<T>& values, std::size_t count) {
  const std::size_t width = count == 0 ? 0 : values.size() / count;
  std::vector<T> rows(values.size());
  for (std::size_t k = 0; k < width; ++k)
    for (std::size_t i = 0; i < count; ++i) rows[i * width + k] = values[k * count + i];
  return rows;
}

TEST_F(ResultFiles, BinaryResultsHoldEveryFieldOfTheRecord) {
  const RunSpec spec = parse_run_spec(parse_spec_text(R"({
    "model": "slider_crank",
    "sweep": {"count": 300, "seed": 5, "vary": {"params.m2": {"uniform": [0.5, 2.0]}}},
    "integrator": {"method": "rk4", "t_end": 0.2},
    "events": [{"name": "crank_at_1", "condition": "th - 1.0", "max": 3}]})"));
  const RunOutcome out = execute(spec);
  const std::string path = (dir_ / "r.h5").string();
  stage_results_h5(path, spec, out).commit();
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  const auto count = static_cast<std::size_t>(spec.batch.count);
  const RecordShape shape = record_shape(spec);
  const auto check = [&](const FieldInfo& field, const auto& want) {
    using Value = typename std::decay_t<decltype(want)>::value_type;
    if (!field_present(field, shape)) {  // the controller's parameters of a controlled run
      EXPECT_EQ(H5Lexists(f, field.name, H5P_DEFAULT), 0) << field.name;
      return;
    }
    const hid_t type = std::is_same_v<Value, double>         ? H5T_NATIVE_DOUBLE
                       : std::is_same_v<Value, std::int64_t> ? H5T_NATIVE_INT64
                                                             : H5T_NATIVE_INT32;
    std::vector<hsize_t> dims;
    int filters = 0;
    const std::vector<Value> got = read_dataset<Value>(f, field.name, type, dims, &filters);
    SCOPED_TRACE(field.name);
    EXPECT_EQ(dims[0], count);
    if (field.width == Width::kOne) {
      EXPECT_EQ(dims.size(), 1u);
    } else {
      ASSERT_EQ(dims.size(), 2u);
      EXPECT_EQ(dims[1], static_cast<hsize_t>(shape(field.width)));
    }
    // Bit for bit (the event records' NaN past each count included).
    const std::vector<Value> expected = system_major(want, count);
    ASSERT_EQ(got.size(), expected.size());
    EXPECT_EQ(std::memcmp(got.data(), expected.data(), sizeof(Value) * got.size()), 0);
    EXPECT_EQ(filters, 2);  // shuffle, deflate
  };
  for_each_result(check, out.results);
  for_each_input(check, spec.batch);
  EXPECT_GT(out.results.event_count[0], 0);  // the event fields hold events
  // The ensemble's statistics and the run's description.
  const hid_t g = H5Gopen2(f, "ensemble", H5P_DEFAULT);
  ASSERT_GE(g, 0);
  std::int64_t ok = -1;
  const hid_t a = H5Aopen(g, "ok", H5P_DEFAULT);
  H5Aread(a, H5T_NATIVE_INT64, &ok);
  H5Aclose(a);
  EXPECT_EQ(ok, out.statistics.ok);
  std::vector<hsize_t> dims;
  const std::vector<double> q = read_dataset<double>(g, "q", H5T_NATIVE_DOUBLE, dims);
  ASSERT_EQ(dims, (std::vector<hsize_t>{static_cast<hsize_t>(shape.n), 8}));
  EXPECT_EQ(q[1], out.statistics.q[0].min);
  EXPECT_EQ(q[8 + 6], out.statistics.q[1].p95);
  H5Gclose(g);
  EXPECT_GT(H5Aexists(f, "run"), 0);
  H5Fclose(f);
}

}  // namespace
}  // namespace ukes
