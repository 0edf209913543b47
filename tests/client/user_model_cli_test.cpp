// User models from the command line: a spec that names a definition file, `ukes models validate`
// on good and bad definitions, and result files that carry the definition.
#include <gtest/gtest.h>
#include <hdf5_hl.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/client/cli_support.hpp"

namespace ukes::cli_test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

class UserModelCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ukes_user_cli_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    fs::create_directory(dir_ / "models");
    fs::copy_file(examples() / "double_pendulum_cartesian.json", dir_ / "models" / "pendulum.json");
  }
  void TearDown() override { fs::remove_all(dir_); }
  static fs::path examples() { return fs::path(UKES_SOURCE_DIR) / "client/examples/models"; }
  Result ukes(const std::string& args) const { return run_ukes(dir_, args); }
  fs::path dir_;
};

TEST_F(UserModelCli, SpecNamingADefinitionFileRunsAndResultsCarryTheDefinition) {
  write_file(dir_ / "spec.json", R"json({"model": "models/pendulum.json",
    "sweep": {"count": 6, "vary": {"params.theta1": {"uniform": [0.5, 1.5]}}},
    "integrator": {"method": "rk4", "t_end": 1.0, "dt": 1e-3},
    "output": {"samples": 5, "trajectories": "all"}})json");
  const Result r = ukes("run spec.json --out r.json --h5 r.h5 --threads 1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("double_pendulum_cartesian"), std::string::npos) << r.out;
  const json results = json::parse(read_file(dir_ / "r.json"));
  EXPECT_EQ(results["model"], "double_pendulum_cartesian");
  ASSERT_TRUE(results["model_definition"].is_object());
  EXPECT_EQ(results["model_definition"]["coordinates"], json({"x1", "y1", "x2", "y2"}));
  const std::string id = results["model_id"];
  EXPECT_EQ(id.rfind("sha256:", 0), 0u);
  // The recorded definition is the model: validating it gives the same id.
  write_file(dir_ / "recorded.json", results["model_definition"].dump());
  const Result v = ukes("models validate recorded.json --json");
  ASSERT_EQ(v.code, 0) << v.err;
  EXPECT_EQ(json::parse(v.out)["id"], id);
  // The rods keep their lengths (1 and 1): the constraint residuals are small in every system.
  for (const auto& system : results["systems"])
    for (const auto& residual : system["residual_max"]["position"])
      EXPECT_LT(residual.get<double>(), 1e-6);

  H5File h5((dir_ / "r.h5").string());
  ASSERT_GE(h5.id, 0);
  EXPECT_EQ(read_string_attr(h5.id, "model_id"), id);
  EXPECT_EQ(json::parse(read_string_attr(h5.id, "model_definition")), results["model_definition"]);
}

TEST_F(UserModelCli, ValidatePrintsSizesRowsAndTheDerivedRows) {
  const Result r = ukes("models validate models/pendulum.json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("n = 4: x1 y1 x2 y2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rows: 2 position"), std::string::npos) << r.out;
  // A = d phi / dq at the default state: row 0 is (2 x1, 2 y1, 0, 0).
  const json j = json::parse(ukes("models validate models/pendulum.json --json").out);
  const auto& q0 = j["q0"];
  const auto& a = j["at_default_state"]["A"];
  EXPECT_DOUBLE_EQ(a[0].get<double>(), 2 * q0[0].get<double>());
  EXPECT_DOUBLE_EQ(a[1].get<double>(), 2 * q0[1].get<double>());
  EXPECT_EQ(a[2].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(a[4].get<double>(), -2 * (q0[2].get<double>() - q0[0].get<double>()));
}

TEST_F(UserModelCli, MistakesAreUsageErrorsWithFieldAndColumn) {
  json d = json::parse(read_file(dir_ / "models/pendulum.json"));
  d["position_constraints"][1] = "(x2 - x1)^2 + (y2 - y1)^2 - l2^2 + x1_dot";
  write_file(dir_ / "bad.json", d.dump());
  const Result v = ukes("models validate bad.json");
  EXPECT_EQ(v.code, 2);
  EXPECT_NE(v.err.find("$.position_constraints[1], column 36"), std::string::npos) << v.err;
  EXPECT_NE(v.err.find("x1_dot"), std::string::npos) << v.err;
  write_file(dir_ / "spec.json", R"json({"model": "bad.json"})json");
  const Result run = ukes("run spec.json");
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.err.find("model.position_constraints[1]"), std::string::npos) << run.err;
  write_file(dir_ / "missing.json", R"json({"model": "models/none.json"})json");
  EXPECT_EQ(ukes("run missing.json").code, 2);
}

}  // namespace
}  // namespace ukes::cli_test
