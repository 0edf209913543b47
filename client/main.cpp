// ukes: ensembles of constrained mechanical systems (Udwadia-Kalaba equation).
//   ukes models [--json]
//   ukes run SPEC [--out results.json] [--h5 traj.h5] [--threads N] [--count N]
//                 [--server HOST:PORT]
//   ukes submit SPEC [--server HOST:PORT] [--count N] [--timeout S] [--no-summaries]
//   ukes attach JOB_ID [--server HOST:PORT] [--out results.json] [--h5 traj.h5]
//   ukes status JOB_ID [--server HOST:PORT] [--json]
//   ukes cancel JOB_ID [--server HOST:PORT]
//   ukes info [--server HOST:PORT] [--json]
//   ukes --version
// The server of submit/attach/status/cancel/info defaults to $UKES_SERVER, else 127.0.0.1:50051.
// A server that serves TLS: --ca FILE (or $UKES_CA), --token TOKEN ($UKES_TOKEN), and for mutual
// TLS --client-cert FILE --client-key FILE, before or after the subcommand.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

#include "client/commands.hpp"
#include "client/remote.hpp"
#include "service/engine/version.hpp"

namespace {

using namespace ukes::cli;

constexpr std::int64_t kMaxCount = std::numeric_limits<std::int64_t>::max();

void add_server_option(CLI::App* command, std::string& server) {
  command->add_option("--server", server, "ukes server (HOST:PORT; default $UKES_SERVER)")
      ->capture_default_str();
}

void add_job_id(CLI::App* command, std::string& job_id) {
  command->add_option("JOB_ID", job_id, "Job id (as `ukes submit` printed it)")
      ->required()
      ->check([](const std::string& id) { return id.empty() ? std::string("empty job id") : ""; });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ukes: ensembles of constrained mechanical systems (Udwadia-Kalaba equation)",
               "ukes"};
  app.set_version_flag("--version", std::string("ukes ") + ukes::version());
  app.require_subcommand(1);
  // Options for reaching a server over TLS; accepted after the subcommand too.
  app.fallthrough();
  ConnectionSecurity security;
  app.add_option("--ca", security.ca_file, "PEM roots that signed the server's certificate (TLS)")
      ->envname("UKES_CA");
  app.add_option("--token", security.token, "Bearer token for the server (sent over TLS only)")
      ->envname("UKES_TOKEN");
  app.add_option("--client-cert", security.client_cert, "Client certificate (PEM), mutual TLS")
      ->envname("UKES_CLIENT_CERT");
  app.add_option("--client-key", security.client_key, "Client certificate's key (PEM)")
      ->envname("UKES_CLIENT_KEY");
  const std::string server_default = default_server();

  bool models_json = false;
  CLI::App* models = app.add_subcommand("models", "List the built-in models");
  models->add_flag("--json", models_json, "Machine-readable output");
  std::string definition_file;
  CLI::App* validate = models->add_subcommand(
      "validate", "Check a model definition file; print its sizes and A, b at its default state");
  validate->add_option("FILE", definition_file, "Model definition (docs/MODEL_FORMAT.md)")
      ->required();
  validate->add_flag("--json", models_json, "Machine-readable output");
  std::string models_server;
  models->add_option("--server", models_server,
                     "List this server's models instead, registered ones with their ids");
  std::string register_server = server_default;
  CLI::App* register_model = models->add_subcommand(
      "register", "Register a model definition with a server; prints its id for run specs");
  register_model->add_option("FILE", definition_file, "Model definition (docs/MODEL_FORMAT.md)")
      ->required();
  register_model->add_option("--server", register_server, "Server address (HOST:PORT)")
      ->capture_default_str();
  std::string delete_id;
  CLI::App* delete_model =
      models->add_subcommand("delete", "Remove a model you registered with a server");
  delete_model->add_option("ID", delete_id, "The id `ukes models register` printed")->required();
  delete_model->add_option("--server", register_server, "Server address (HOST:PORT)")
      ->capture_default_str();

  RunOptions run_options;
  CLI::App* run = app.add_subcommand("run", "Run the ensemble a spec describes");
  run->add_option("SPEC", run_options.spec, "Run spec (JSON file; - reads standard input)")
      ->required();
  run->add_option("--out", run_options.out, "Write the results JSON here");
  run->add_option("--h5", run_options.h5, "Write the trajectories (HDF5) here");
  run->add_option("--threads", run_options.threads, "CPU threads (default: all; in-process only)")
      ->check(CLI::Range(1, 4096));
  run->add_option("--count", run_options.count, "Replace the spec's sweep.count")
      ->check(CLI::Range(std::int64_t{1}, kMaxCount));
  run->add_option("--server", run_options.server,
                  "Run on a ukes server (HOST:PORT) instead of in-process");

  SubmitOptions submit_options;
  submit_options.server = server_default;
  CLI::App* submit = app.add_subcommand("submit", "Queue a spec on a server; prints the job id");
  submit->add_option("SPEC", submit_options.spec, "Run spec (JSON file; - reads standard input)")
      ->required();
  add_server_option(submit, submit_options.server);
  submit->add_option("--count", submit_options.count, "Replace the spec's sweep.count")
      ->check(CLI::Range(std::int64_t{1}, kMaxCount));
  submit
      ->add_option("--timeout", submit_options.timeout_s,
                   "Stop the job when it runs longer than this (seconds; 0: no limit)")
      ->check(CLI::NonNegativeNumber);
  submit->add_flag("--no-summaries", submit_options.no_summaries,
                   "Ensemble statistics only: no per-system summaries in the results");

  AttachOptions attach_options;
  attach_options.server = server_default;
  CLI::App* attach =
      app.add_subcommand("attach", "Follow a job's results to its end and write its files");
  add_job_id(attach, attach_options.job_id);
  add_server_option(attach, attach_options.server);
  attach->add_option("--out", attach_options.out, "Write the results JSON here");
  attach->add_option("--h5", attach_options.h5, "Write the trajectories (HDF5) here");

  std::string job_id, server = server_default;
  bool json = false;
  CLI::App* status = app.add_subcommand("status", "A job's state and progress");
  add_job_id(status, job_id);
  add_server_option(status, server);
  status->add_flag("--json", json, "The server's answer as JSON");

  CLI::App* cancel = app.add_subcommand("cancel", "Stop a queued or running job");
  add_job_id(cancel, job_id);
  add_server_option(cancel, server);

  CLI::App* info = app.add_subcommand("info", "What a server runs on and what it accepts");
  add_server_option(info, server);
  info->add_flag("--json", json, "The server's answer as JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, the version or the error
    return code == 0 ? kExitOk : kExitUsage;
  }
  try {
    set_connection_security(security);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ukes: %s\n", e.what());
    return kExitUsage;
  }
  if (validate->parsed()) return validate_command(definition_file, models_json);
  if (register_model->parsed()) return register_command(definition_file, register_server);
  if (delete_model->parsed()) return delete_model_command(delete_id, register_server);
  if (models->parsed() && !models_server.empty())
    return server_models_command(models_server, models_json);
  if (models->parsed()) return models_command(models_json);
  if (run->parsed()) return run_command(run_options);
  if (submit->parsed()) return submit_command(submit_options);
  if (attach->parsed()) return attach_command(attach_options);
  if (status->parsed()) return status_command(job_id, server, json);
  if (cancel->parsed()) return cancel_command(job_id, server);
  if (info->parsed()) return info_command(server, json);
  return kExitUsage;
}
