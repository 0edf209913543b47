// ukes: ensembles of constrained mechanical systems (Udwadia-Kalaba equation).
//   ukes models [--json]
//   ukes run SPEC [--out results.json] [--h5 traj.h5] [--threads N] [--server HOST:PORT]
//   ukes --version
#include <CLI/CLI.hpp>
#include <string>

#include "client/commands.hpp"
#include "service/engine/version.hpp"

int main(int argc, char** argv) {
  using namespace ukes::cli;
  CLI::App app{"ukes: ensembles of constrained mechanical systems (Udwadia-Kalaba equation)",
               "ukes"};
  app.set_version_flag("--version", std::string("ukes ") + ukes::version());
  app.require_subcommand(1);

  bool models_json = false;
  CLI::App* models = app.add_subcommand("models", "List the built-in models");
  models->add_flag("--json", models_json, "Machine-readable output");

  RunOptions run_options;
  CLI::App* run = app.add_subcommand("run", "Run the ensemble a spec describes");
  run->add_option("SPEC", run_options.spec, "Run spec (JSON file; - reads standard input)")
      ->required();
  run->add_option("--out", run_options.out, "Write the results JSON here");
  run->add_option("--h5", run_options.h5, "Write the trajectories (HDF5) here");
  run->add_option("--threads", run_options.threads, "CPU threads (default: all)")
      ->check(CLI::Range(1, 4096));
  run->add_option("--server", run_options.server, "Run on a ukes server (HOST:PORT)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, the version or the error
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (models->parsed()) return models_command(models_json);
  if (run->parsed()) return run_command(run_options);
  return kExitUsage;
}
