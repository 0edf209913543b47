// The `ukes` command-line client, run as a separate process on specs in temporary directories:
// results files against a direct run of the same batch, HDF5 trajectories read back with the
// HDF5 C API, statistics against an independent computation, and bad specs rejected cleanly.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "service/engine/version.hpp"
#include "tests/client/cli_support.hpp"

namespace ukes {
namespace {

namespace fs = std::filesystem;
using namespace cli_test;
using json = nlohmann::json;

constexpr double kTwoPi = 6.283185307179586;

// A scratch directory: spec files and captured output in base(), result files in out().
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ukes_cli_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    base_ = tmpl;
    fs::create_directory(out());
  }
  void TearDown() override { fs::remove_all(base_); }

  fs::path base() const { return base_; }
  fs::path out() const { return base_ / "out"; }

  // Runs `ukes ARGS` (in base()), optionally with stdin from a file.
  Result ukes(const std::string& args, const std::string& stdin_file = "") const {
    return run_ukes(base_, args, "", stdin_file);
  }

  std::vector<std::string> out_files() const {
    std::vector<std::string> v;
    for (const auto& entry : fs::directory_iterator(out()))
      v.push_back(entry.path().filename().string());
    return v;
  }

 private:
  fs::path base_;
};

double num(const json& j) { return j.is_null() ? NAN : j.get<double>(); }

// numpy.percentile's default (linear interpolation between order statistics).
double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double pos = p / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

void expect_summary(const json& s, const std::vector<double>& v, const std::string& what) {
  ASSERT_FALSE(v.empty());
  double mean = 0;
  for (double x : v) mean += x / static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean) / static_cast<double>(v.size());
  double scale = 1e-300;
  for (double x : v) scale = std::max(scale, std::fabs(x));
  const double tol = 1e-12 * std::fabs(scale);
  EXPECT_EQ(s.at("count").get<std::int64_t>(), static_cast<std::int64_t>(v.size())) << what;
  EXPECT_EQ(num(s.at("min")), *std::min_element(v.begin(), v.end())) << what;
  EXPECT_EQ(num(s.at("max")), *std::max_element(v.begin(), v.end())) << what;
  EXPECT_NEAR(num(s.at("mean")), mean, tol) << what;
  EXPECT_NEAR(num(s.at("std")), std::sqrt(var), tol) << what;
  EXPECT_NEAR(num(s.at("p50")), percentile(v, 50), tol) << what;
  EXPECT_NEAR(num(s.at("p95")), percentile(v, 95), tol) << what;
  EXPECT_NEAR(num(s.at("p99")), percentile(v, 99), tol) << what;
}

// ------------------------------------------------------------------ HDF5 read-back helpers

std::vector<hsize_t> dims_of(hid_t file, const char* name) {
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return {};  // absent: no HDF5 error stack
  const hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  if (d < 0) return {};
  const hid_t s = H5Dget_space(d);
  std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(s)));
  H5Sget_simple_extent_dims(s, dims.data(), nullptr);
  H5Sclose(s);
  H5Dclose(d);
  return dims;
}

std::vector<double> read_doubles(hid_t file, const char* name) {
  std::size_t count = 1;
  for (auto d : dims_of(file, name)) count *= static_cast<std::size_t>(d);
  std::vector<double> v(count);
  const hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  EXPECT_GE(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0) << name;
  H5Dclose(d);
  return v;
}

std::vector<std::int64_t> read_int64(hid_t file, const char* name) {
  std::size_t count = 1;
  for (auto d : dims_of(file, name)) count *= static_cast<std::size_t>(d);
  std::vector<std::int64_t> v(count);
  const hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  EXPECT_GE(H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0) << name;
  H5Dclose(d);
  return v;
}

std::vector<std::string> read_strings(hid_t file, const char* name) {
  const auto dims = dims_of(file, name);
  std::vector<char*> p(dims.empty() ? 0 : static_cast<std::size_t>(dims[0]));
  const hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  const hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  EXPECT_GE(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, p.data()), 0) << name;
  std::vector<std::string> v(p.begin(), p.end());
  const hid_t s = H5Dget_space(d);
  H5Dvlen_reclaim(t, s, H5P_DEFAULT, p.data());
  H5Sclose(s);
  H5Tclose(t);
  H5Dclose(d);
  return v;
}

// ------------------------------------------------------------------ models and version

const char* const kModelNames[15] = {"spiral",
                                     "swarm",
                                     "flexible_joint",
                                     "duffing",
                                     "two_rod_pendulum",
                                     "scara",
                                     "pendulum_polar",
                                     "slider_crank",
                                     "four_bar",
                                     "chaplygin_sleigh",
                                     "friction_ring",
                                     "projectile_polar",
                                     "pfaffian_particle",
                                     "moving_support_pendulum",
                                     "ellipse_particle"};
// n of each model (docs/MODELS.md).
const int kModelN[15] = {2, 10, 4, 2, 3, 4, 2, 3, 9, 3, 2, 2, 3, 2, 2};

TEST_F(CliTest, ModelsListsAllFifteen) {
  const Result r = ukes("models");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* name : kModelNames)
    EXPECT_NE(r.out.find(std::string("\n") + name + " "), std::string::npos) << name;

  const Result j = ukes("models --json");
  ASSERT_EQ(j.code, 0) << j.err;
  const json models = json::parse(j.out);
  ASSERT_EQ(models.size(), 15u);
  for (std::size_t k = 0; k < 15; ++k) {
    EXPECT_EQ(models[k].at("name"), kModelNames[k]);
    EXPECT_EQ(models[k].at("n"), kModelN[k]) << kModelNames[k];
    EXPECT_EQ(models[k].at("coordinates").size(), static_cast<std::size_t>(kModelN[k]));
  }
  // duffing (docs/MODELS.md sec. 4): one position row, 11 parameters, m1 = 2 by default.
  const json& duffing = models[3];
  EXPECT_EQ(duffing.at("position_rows"), 1);
  EXPECT_EQ(duffing.at("velocity_rows"), 0);
  ASSERT_EQ(duffing.at("params").size(), 11u);
  EXPECT_EQ(duffing.at("params")[0].at("name"), "m1");
  EXPECT_EQ(duffing.at("params")[0].at("default"), 2.0);
  // swarm's N is structural.
  EXPECT_EQ(models[1].at("params")[0].at("name"), "N");
  EXPECT_TRUE(models[1].at("params")[0].at("structural").get<bool>());
}

TEST_F(CliTest, Version) {
  const Result r = ukes("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, std::string("ukes ") + version() + "\n");
}

TEST_F(CliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(ukes("").code, 2);
  EXPECT_EQ(ukes("frobnicate").code, 2);
  EXPECT_EQ(ukes("run").code, 2);
  write_file(base() / "spec.json", R"({"model": "duffing"})");
  EXPECT_EQ(ukes("run spec.json --threads 0").code, 2);
  EXPECT_EQ(ukes("run missing.json").code, 2);
  EXPECT_TRUE(out_files().empty());
}

// ------------------------------------------------------------------ a run against a direct run

TEST_F(CliTest, ResultsAndTrajectoriesEqualADirectRun) {
  write_file(base() / "spec.json", R"({
    "model": "duffing",
    "params": {"k1": 10.5},
    "systems": [
      {"params": {"m1": 2.1}, "q0": [1.0, 1.0], "qd0": [8.283185307179586, 2.0]},
      {"params": {"A0": 0.5}},
      {"q0": [0.5, 0.25], "qd0": [6.0, 0.0]}
    ],
    "integrator": {"t_end": 3.0, "rtol": 1e-10, "atol": 1e-10},
    "output": {"samples": 21, "trajectories": [2, 0]}
  })");
  const Result r = ukes("run spec.json --out out/results.json --h5 out/traj.h5 --threads 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("ok 3"), std::string::npos) << r.out;

  // The same batch, built by hand from the spec and docs/MODELS.md's default IC, run directly.
  const ModelInfo* m = find_model("duffing");
  ASSERT_NE(m, nullptr);
  Batch b = Batch::defaults(*m, 3);
  const int m1 = m->param_index("m1"), k1 = m->param_index("k1"), a0 = m->param_index("A0");
  for (int i = 0; i < 3; ++i) b.param(k1, i) = 10.5;
  b.param(m1, 0) = 2.1;
  b.q(0, 0) = 1.0, b.q(1, 0) = 1.0, b.qd(0, 0) = 8.283185307179586, b.qd(1, 0) = 2.0;
  b.param(a0, 1) = 0.5;
  b.q(0, 1) = 1.0, b.q(1, 1) = 1.0, b.qd(0, 1) = 0.5 * kTwoPi + 2.0, b.qd(1, 1) = 2.0;
  b.q(0, 2) = 0.5, b.q(1, 2) = 0.25, b.qd(0, 2) = 6.0, b.qd(1, 2) = 0.0;
  EnsembleSettings s;
  s.method = Method::kDopri5;
  s.t0 = 0.0;
  s.t_end = 3.0;
  s.rtol = s.atol = 1e-10;
  s.alpha = s.beta = 0.0;
  s.samples = 21;
  s.threads = 1;
  BatchResults d;
  run_ensemble_cpu(b, s, d, {2, 0});

  // results.json: every key of the contract, numbers equal to the direct run.
  const json doc = json::parse(read_file(out() / "results.json"));
  for (const char* key :
       {"model", "n", "m", "backend", "precision", "elapsed_s", "systems", "ensemble"})
    EXPECT_TRUE(doc.contains(key)) << key;
  EXPECT_EQ(doc.at("model"), "duffing");
  EXPECT_EQ(doc.at("n"), 2);
  EXPECT_EQ(doc.at("m"), 1);
  EXPECT_EQ(doc.at("backend"), "cpu");
  EXPECT_EQ(doc.at("precision"), "fp64");
  EXPECT_GE(doc.at("elapsed_s").get<double>(), 0.0);
  ASSERT_EQ(doc.at("systems").size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const json& sj = doc.at("systems")[static_cast<std::size_t>(i)];
    const auto ui = static_cast<std::size_t>(i);
    for (const char* key : {"id", "status", "t", "q", "qd", "residual_max", "force_max",
                            "inconsistency_max", "steps"})
      EXPECT_TRUE(sj.contains(key)) << key;
    EXPECT_EQ(sj.at("id"), i);
    EXPECT_EQ(sj.at("status"), status_name(static_cast<Status>(d.status[ui])));
    EXPECT_EQ(sj.at("status"), "ok");
    EXPECT_EQ(num(sj.at("t")), d.t[ui]);
    EXPECT_EQ(num(sj.at("t")), 3.0);
    for (int j = 0; j < 2; ++j) {
      EXPECT_EQ(num(sj.at("q")[static_cast<std::size_t>(j)]), d.q_at(j, i));
      EXPECT_EQ(num(sj.at("qd")[static_cast<std::size_t>(j)]), d.qd_at(j, i));
    }
    const json& rm = sj.at("residual_max");
    ASSERT_EQ(rm.at("position").size(), 1u);
    ASSERT_EQ(rm.at("position_rate").size(), 1u);
    EXPECT_TRUE(rm.at("velocity").empty());
    EXPECT_EQ(num(rm.at("position")[0]), d.residual_at(0, i));
    EXPECT_EQ(num(rm.at("position_rate")[0]), d.residual_at(1, i));
    EXPECT_EQ(num(sj.at("force_max")), d.force_max[ui]);
    EXPECT_EQ(num(sj.at("inconsistency_max")), d.inconsistency_max[ui]);
    EXPECT_EQ(sj.at("steps").get<std::int64_t>(), d.steps[ui]);
  }
  // System 0 and 1 start on the constraint (phi(0) = 0 = phid(0)): docs/MODELS.md bound at tight
  // tol.
  EXPECT_LT(d.residual_at(0, 0), 1e-8);
  EXPECT_LT(d.residual_at(0, 1), 1e-8);
  // System 2 starts off it: phi(0) = 0.25, phid(0) = 6 - 0 - A0 omega = 6 - 2 pi; without
  // stabilization phidd = 0, so phi(t) = 0.25 + (6 - 2 pi) t and max |phi| over [0, 3] is at t = 3.
  EXPECT_NEAR(d.residual_at(0, 2), std::fabs(0.25 + (6.0 - kTwoPi) * 3.0), 1e-7);
  EXPECT_NEAR(d.residual_at(1, 2), std::fabs(6.0 - kTwoPi), 1e-7);

  const json& e = doc.at("ensemble");
  EXPECT_EQ(e.at("count"), 3);
  EXPECT_EQ(e.at("ok"), 3);
  EXPECT_EQ(e.at("failed"), 0);
  ASSERT_EQ(e.at("q").size(), 2u);
  for (int j = 0; j < 2; ++j) {
    std::vector<double> v;
    for (int i = 0; i < 3; ++i) v.push_back(d.q_at(j, i));
    expect_summary(e.at("q")[static_cast<std::size_t>(j)], v,
                   std::string("q") += std::to_string(j));
  }
  std::vector<double> phi_max;
  for (int i = 0; i < 3; ++i) phi_max.push_back(d.residual_at(0, i));
  expect_summary(e.at("residual_max").at("position")[0], phi_max, "phi max");

  // traj.h5: shapes, ids, names, values.
  H5File f((out() / "traj.h5").string());
  ASSERT_GE(f.id, 0);
  EXPECT_EQ(read_string_attr(f.id, "model"), "duffing");
  EXPECT_EQ(dims_of(f.id, "t"), (std::vector<hsize_t>{21}));
  const std::vector<double> t = read_doubles(f.id, "t");
  EXPECT_EQ(t.front(), 0.0);
  EXPECT_EQ(t.back(), 3.0);
  for (int k = 0; k < 21; ++k) EXPECT_NEAR(t[static_cast<std::size_t>(k)], 0.15 * k, 1e-14);
  EXPECT_EQ(read_int64(f.id, "system_ids"), (std::vector<std::int64_t>{2, 0}));
  EXPECT_EQ(read_strings(f.id, "coordinate"), (std::vector<std::string>{"x1", "x2"}));
  const std::vector<std::string> pnames = read_strings(f.id, "param");
  ASSERT_EQ(pnames.size(), 11u);
  EXPECT_EQ(pnames[0], "m1");
  EXPECT_EQ(dims_of(f.id, "params"), (std::vector<hsize_t>{2, 11}));
  const std::vector<double> pv = read_doubles(f.id, "params");
  EXPECT_EQ(pv[0 * 11 + static_cast<std::size_t>(m1)], 2.0);  // system 2
  EXPECT_EQ(pv[1 * 11 + static_cast<std::size_t>(m1)], 2.1);  // system 0
  EXPECT_EQ(pv[1 * 11 + static_cast<std::size_t>(k1)], 10.5);
  for (const char* field : {"q", "qd", "force"})
    EXPECT_EQ(dims_of(f.id, field), (std::vector<hsize_t>{2, 21, 2})) << field;
  EXPECT_EQ(dims_of(f.id, "residual"), (std::vector<hsize_t>{2, 21, 2}));
  EXPECT_EQ(read_doubles(f.id, "q"), d.traj_q);
  EXPECT_EQ(read_doubles(f.id, "qd"), d.traj_qd);
  EXPECT_EQ(read_doubles(f.id, "residual"), d.traj_residual);
  EXPECT_EQ(read_doubles(f.id, "force"), d.traj_force);
  // Independent check of the file's content: the stored residual is phi(q(t), t)
  // = x1 - x2 - A0 e^{-alpha t} sin(omega t) of the stored positions, and the last sample is
  // the final state of results.json.
  const std::vector<double> q = read_doubles(f.id, "q"), res = read_doubles(f.id, "residual");
  for (std::size_t slot = 0; slot < 2; ++slot) {
    for (std::size_t k = 0; k < 21; ++k) {
      const std::size_t at = (slot * 21 + k) * 2;
      // Systems 2 and 0 have the default A0 = 1, alpha = 1, omega = 2 pi.
      const double phi = q[at] - q[at + 1] - std::exp(-t[k]) * std::sin(kTwoPi * t[k]);
      EXPECT_NEAR(res[at], phi, 1e-12) << "slot " << slot << " sample " << k;
    }
    const int id = slot == 0 ? 2 : 0;
    EXPECT_EQ(q[(slot * 21 + 20) * 2], d.q_at(0, id));
  }
}

// ------------------------------------------------------------------ sweeps and statistics

TEST_F(CliTest, SweepFromStdinWithIndependentStatistics) {
  write_file(base() / "spec.json", R"({
    "model": "duffing",
    "sweep": {"count": 200, "seed": 11, "sampler": "sobol",
              "vary": {"params.m1": {"uniform": [1.5, 2.5]}, "q0[0]": {"normal": [1.0, 0.01]}}},
    "integrator": {"rtol": 1e-10, "atol": 1e-10},
    "output": {"samples": 11, "trajectories": "first:5", "fields": ["q"]}
  })");
  const Result r = ukes("run - --out out/r.json --h5 out/t.h5", (base() / "spec.json").string());
  ASSERT_EQ(r.code, 0) << r.err;
  const json doc = json::parse(read_file(out() / "r.json"));
  const json& systems = doc.at("systems");
  ASSERT_EQ(systems.size(), 200u);
  std::vector<double> x1, x2d, phi, phid;
  for (const json& sj : systems) {
    ASSERT_EQ(sj.at("status"), "ok");
    const double m1 = sj.at("sample").at("params.m1").get<double>();
    EXPECT_GE(m1, 1.5);
    EXPECT_LE(m1, 2.5);
    // qd0 is on the velocity constraint (phid(0) = 0) and there is no stabilization, so
    // phidd = 0 keeps phi(t) = phi(0) = x1(0) - 1: the maximum |phi| is |x1(0) - 1|.
    const double dx = sj.at("sample").at("q0[0]").get<double>() - 1.0;
    EXPECT_NEAR(num(sj.at("residual_max").at("position")[0]), std::fabs(dx), 1e-8);
    x1.push_back(num(sj.at("q")[0]));
    x2d.push_back(num(sj.at("qd")[1]));
    phi.push_back(num(sj.at("residual_max").at("position")[0]));
    phid.push_back(num(sj.at("residual_max").at("position_rate")[0]));
  }
  const json& e = doc.at("ensemble");
  EXPECT_EQ(e.at("count"), 200);
  EXPECT_EQ(e.at("ok"), 200);
  EXPECT_EQ(e.at("failed"), 0);
  EXPECT_EQ(e.at("by_status").at("ok"), 200);
  expect_summary(e.at("q")[0], x1, "x1");
  expect_summary(e.at("qd")[1], x2d, "x2d");
  expect_summary(e.at("residual_max").at("position")[0], phi, "phi");
  expect_summary(e.at("residual_max").at("position_rate")[0], phid, "phid");
  EXPECT_EQ(doc.at("sweep").at("sampler"), "sobol");

  H5File f((out() / "t.h5").string());
  ASSERT_GE(f.id, 0);
  EXPECT_EQ(dims_of(f.id, "q"), (std::vector<hsize_t>{5, 11, 2}));
  EXPECT_TRUE(dims_of(f.id, "qd").empty());  // not requested
  EXPECT_EQ(read_int64(f.id, "system_ids"), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  const std::vector<double> q = read_doubles(f.id, "q");
  for (std::size_t s = 0; s < 5; ++s) {
    EXPECT_EQ(q[(s * 11 + 0) * 2], systems[s].at("sample").at("q0[0]").get<double>());
    EXPECT_EQ(q[(s * 11 + 10) * 2], num(systems[s].at("q")[0]));
  }
}

TEST_F(CliTest, DuffingExampleRuns) {
  const std::string example = std::string(UKES_SOURCE_DIR) + "/client/examples/duffing_sweep.json";
  const Result r = ukes("run '" + example + "' --out out/r.json --threads 2");
  ASSERT_EQ(r.code, 0) << r.err;
  const json doc = json::parse(read_file(out() / "r.json"));
  EXPECT_EQ(doc.at("ensemble").at("count"), 4000);
  EXPECT_EQ(doc.at("ensemble").at("ok"), 4000);
  // phid(0) = 0 for every system (qd0 is the consistent default): it stays at the solver's
  // error level although phi(0) = x1(0) - 1 != 0.
  EXPECT_LT(num(doc.at("ensemble").at("residual_max").at("position_rate")[0].at("max")), 1e-8);
}

// The bouncing bead (client/examples/bouncing_bead.json): the summary counts each event's
// occurrences, and results.json has every impact time of the closed form (docs/EVENTS.md).
TEST_F(CliTest, BouncingBeadExampleSummarizesItsImpacts) {
  const std::string example = std::string(UKES_SOURCE_DIR) + "/client/examples/bouncing_bead.json";
  const Result r = ukes("run '" + example + "' --out out/r.json --threads 2");
  ASSERT_EQ(r.code, 0) << r.err;
  const json doc = json::parse(read_file(out() / "r.json"));
  const double g = 9.81, t1 = std::sqrt(2 / g);
  std::int64_t impacts = 0, fewest = 1 << 30, most = 0;
  for (const json& system : doc.at("systems")) {
    const double e = system.at("sample").at("params.restitution").get<double>();
    const json& times = system.at("event_t").at("floor");
    std::int64_t k = 0;
    for (double t = t1, v = g * t1; t < 2.5; ++k, v *= e, t += 2 * v / g) {
      ASSERT_LT(k, static_cast<std::int64_t>(times.size()));
      EXPECT_NEAR(num(times[static_cast<std::size_t>(k)]), t, 1e-9);
    }
    EXPECT_EQ(system.at("event_count").at("floor").get<std::int64_t>(), k);
    impacts += k;
    fewest = std::min(fewest, k);
    most = std::max(most, k);
  }
  // The name left-aligned in 20 columns, as the statistics' rows are.
  const std::string line = "  floor" + std::string(16, ' ') + std::to_string(impacts) +
                           " in 64 systems, " + std::to_string(fewest) + " to " +
                           std::to_string(most) + " per system";
  EXPECT_NE(r.out.find("\nevents over the 64 systems:\n" + line + "\n"), std::string::npos)
      << r.out;
}

// ------------------------------------------------------------------ failures

TEST_F(CliTest, BadSpecsExitTwoNameTheFieldAndWriteNothing) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"model": "duffing", "integrator": {"rtol": -1}})", "integrator.rtol"},
      {R"({"model": "duffing", "systems": [{}, {}, {}, {"q0": [1, 2, 3]}]})", "systems[3].q0"},
      {R"({"model": "duffing", "sweep": {"count": 3, "vary": {"params.m1": {"uniform": [2, 1]}}}})",
       "sweep.vary.params.m1.uniform"},
      {R"({"model": "duffing", "sweep": {"count": 3, "vary": {"q0[7]": {"uniform": [0, 1]}}}})",
       "sweep.vary.q0[7]"},
      {R"({"model": "duffing", "output": {"trajectories": [5]}})", "output.trajectories[0]"},
      {R"({"model": "duffing", "device": "gpu"})", "device"},
      {R"({"model": "nosuch"})", "model"},
      {R"({"model": "duffing", "colour": "red"})", "colour"},
      {R"({"model": "duffing", )", "spec"},
  };
  for (const auto& [spec, field] : cases) {
    write_file(base() / "bad.json", spec);
    const Result r = ukes("run bad.json --out out/results.json --h5 out/traj.h5");
    EXPECT_EQ(r.code, 2) << spec;
    EXPECT_EQ(r.err.rfind(std::string("ukes: spec error: ") + field + ": ", 0), 0u) << spec << "\n"
                                                                                    << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // one line
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(out_files().empty()) << spec;
  }
  // Also on standard input.
  write_file(base() / "bad.json", R"({"model": "duffing", "precision": "fp16"})");
  const Result r = ukes("run - --out out/results.json", (base() / "bad.json").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("ukes: spec error: precision: ", 0), 0u) << r.err;
  EXPECT_TRUE(out_files().empty());
}

// Hostile inputs: an endless file (once read without bound), a NUL byte (once ended the
// document: the rest was ignored and the run went ahead).
TEST_F(CliTest, EndlessOrBinarySpecsAreRefused) {
  const Result endless = ukes("run /dev/zero --out out/results.json");
  EXPECT_EQ(endless.code, 2);
  EXPECT_NE(endless.err.find("larger than 64 MiB"), std::string::npos) << endless.err;
  write_file(base() / "nul.json", std::string(R"({"model": "duffing"})") + '\0' + "{oops");
  const Result nul = ukes("run nul.json --out out/results.json");
  EXPECT_EQ(nul.code, 2);
  EXPECT_EQ(nul.err.rfind("ukes: spec error: spec: invalid JSON: a NUL byte", 0), 0u) << nul.err;
  EXPECT_TRUE(out_files().empty());
}

TEST_F(CliTest, LimitsAreReportedDistinctly) {
  write_file(base() / "big.json", R"({"model": "duffing", "sweep": {"count": 100000000000}})");
  const Result r = ukes("run big.json --out out/results.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("ukes: limit exceeded: sweep.count: ", 0), 0u) << r.err;
  EXPECT_TRUE(out_files().empty());
}

TEST_F(CliTest, UnwritableOutputLeavesNothingBehind) {
  write_file(base() / "spec.json", R"({"model": "duffing", "output": {"trajectories": "all"}})");
  const Result r = ukes("run spec.json --out out/results.json --h5 out/missing/traj.h5");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("out/missing/traj.h5"), std::string::npos) << r.err;
  EXPECT_TRUE(out_files().empty());
  // An output that names a directory is refused as well.
  const Result d = ukes("run spec.json --out out");
  EXPECT_EQ(d.code, 1);
  EXPECT_TRUE(out_files().empty());
}

}  // namespace
}  // namespace ukes
