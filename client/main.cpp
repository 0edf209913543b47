// ukes: ensembles of constrained mechanical systems (Udwadia-Kalaba equation).
//   ukes models [--json]
//   ukes run SPEC [--out results.json|results.h5] [--h5 traj.h5] [--threads N] [--count N]
//                 [--devices 0,2] [--server HOST:PORT[,HOST:PORT...]] [--shards N]
//                 [--each-address]
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

// Options for reaching a server over TLS; accepted after the subcommand too.
void add_security_options(CLI::App& app, ConnectionSecurity& security) {
  app.fallthrough();
  app.add_option("--ca", security.ca_file, "PEM roots that signed the server's certificate (TLS)")
      ->envname("UKES_CA");
  app.add_option("--token", security.token, "Bearer token for the server (sent over TLS only)")
      ->envname("UKES_TOKEN");
  app.add_option("--client-cert", security.client_cert, "Client certificate (PEM), mutual TLS")
      ->envname("UKES_CLIENT_CERT");
  app.add_option("--client-key", security.client_key, "Client certificate's key (PEM)")
      ->envname("UKES_CLIENT_KEY");
}

// `ukes models` and its subcommands, which share the definition file, --json and the server.
struct ModelsCommand {
  bool json = false;
  std::string definition_file;  // validate, register
  std::string server;           // `models --server`: list that server's models
  std::string register_server;  // register, delete
  std::string delete_id;
  CLI::App* models = nullptr;
  CLI::App* validate = nullptr;
  CLI::App* register_model = nullptr;
  CLI::App* delete_model = nullptr;
};

void add_models_command(CLI::App& app, ModelsCommand& m, const std::string& server_default) {
  m.models = app.add_subcommand("models", "List the built-in models");
  m.models->add_flag("--json", m.json, "Machine-readable output");
  m.validate = m.models->add_subcommand(
      "validate", "Check a model definition file; print its sizes and A, b at its default state");
  m.validate->add_option("FILE", m.definition_file, "Model definition (docs/MODEL_FORMAT.md)")
      ->required();
  m.validate->add_flag("--json", m.json, "Machine-readable output");
  m.models->add_option("--server", m.server,
                       "List this server's models instead, registered ones with their ids");
  m.register_server = server_default;
  m.register_model = m.models->add_subcommand(
      "register", "Register a model definition with a server; prints its id for run specs");
  m.register_model->add_option("FILE", m.definition_file, "Model definition (docs/MODEL_FORMAT.md)")
      ->required();
  m.register_model->add_option("--server", m.register_server, "Server address (HOST:PORT)")
      ->capture_default_str();
  m.delete_model =
      m.models->add_subcommand("delete", "Remove a model you registered with a server");
  m.delete_model->add_option("ID", m.delete_id, "The id `ukes models register` printed")
      ->required();
  m.delete_model->add_option("--server", m.register_server, "Server address (HOST:PORT)")
      ->capture_default_str();
}

int models_main(const ModelsCommand& m) {
  if (m.validate->parsed()) return validate_command(m.definition_file, m.json);
  if (m.register_model->parsed()) return register_command(m.definition_file, m.register_server);
  if (m.delete_model->parsed()) return delete_model_command(m.delete_id, m.register_server);
  if (!m.server.empty()) return server_models_command(m.server, m.json);
  return models_command(m.json);
}

CLI::App* add_run_command(CLI::App& app, RunOptions& run_options) {
  CLI::App* run = app.add_subcommand("run", "Run the ensemble a spec describes");
  run->add_option("SPEC", run_options.spec, "Run spec (JSON file; - reads standard input)")
      ->required();
  run->add_option("--out", run_options.out,
                  "Write the per-system results here (HDF5 for .h5 or .hdf5, else JSON)");
  run->add_option("--h5", run_options.h5, "Write the trajectories (HDF5) here");
  run->add_option("--threads", run_options.threads, "CPU threads (default: all; in-process only)")
      ->check(CLI::Range(1, 4096));
  run->add_option("--count", run_options.count, "Replace the spec's sweep.count")
      ->check(CLI::Range(std::int64_t{1}, kMaxCount));
  run->add_option("--devices", run_options.devices,
                  "The GPUs to spread the run over, e.g. 0,2 (the spec's device_ids; default: "
                  "every usable GPU)");
  run->add_option("--server", run_options.server,
                  "Run on a ukes server (HOST:PORT) instead of in-process; a comma-separated "
                  "list shards the run over those servers");
  run->add_option("--shards", run_options.shards,
                  "Split the run into N shards, dealt to the --server list in turn (default: "
                  "one per server)")
      ->check(CLI::Range(1, 4096));
  run->add_flag("--each-address", run_options.each_address,
                "Shard over every address each --server name resolves to (a Kubernetes "
                "headless Service: one name, one address per pod)");
  return run;
}

CLI::App* add_submit_command(CLI::App& app, SubmitOptions& submit_options,
                             const std::string& server_default) {
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
  return submit;
}

CLI::App* add_attach_command(CLI::App& app, AttachOptions& attach_options,
                             const std::string& server_default) {
  attach_options.server = server_default;
  CLI::App* attach =
      app.add_subcommand("attach", "Follow a job's results to its end and write its files");
  add_job_id(attach, attach_options.job_id);
  add_server_option(attach, attach_options.server);
  attach->add_option("--out", attach_options.out,
                     "Write the per-system results here (HDF5 for .h5 or .hdf5, else JSON)");
  attach->add_option("--h5", attach_options.h5, "Write the trajectories (HDF5) here");
  return attach;
}

// status, cancel and info: one job id, server and --json between them.
struct JobCommands {
  std::string job_id;
  std::string server;
  bool json = false;
  CLI::App* status = nullptr;
  CLI::App* cancel = nullptr;
  CLI::App* info = nullptr;
};

void add_job_commands(CLI::App& app, JobCommands& j, const std::string& server_default) {
  j.server = server_default;
  j.status = app.add_subcommand("status", "A job's state and progress");
  add_job_id(j.status, j.job_id);
  add_server_option(j.status, j.server);
  j.status->add_flag("--json", j.json, "The server's answer as JSON");

  j.cancel = app.add_subcommand("cancel", "Stop a queued or running job");
  add_job_id(j.cancel, j.job_id);
  add_server_option(j.cancel, j.server);

  j.info = app.add_subcommand("info", "What a server runs on and what it accepts");
  add_server_option(j.info, j.server);
  j.info->add_flag("--json", j.json, "The server's answer as JSON");
}

int job_main(const JobCommands& j) {
  if (j.status->parsed()) return status_command(j.job_id, j.server, j.json);
  if (j.cancel->parsed()) return cancel_command(j.job_id, j.server);
  if (j.info->parsed()) return info_command(j.server, j.json);
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ukes: ensembles of constrained mechanical systems (Udwadia-Kalaba equation)",
               "ukes"};
  app.set_version_flag("--version", std::string("ukes ") + ukes::version());
  app.require_subcommand(1);
  ConnectionSecurity security;
  add_security_options(app, security);
  const std::string server_default = default_server();
  // CLI11 keeps the addresses of these: they stay here until the command has run.
  ModelsCommand models;
  add_models_command(app, models, server_default);
  RunOptions run_options;
  CLI::App* run = add_run_command(app, run_options);
  SubmitOptions submit_options;
  CLI::App* submit = add_submit_command(app, submit_options, server_default);
  AttachOptions attach_options;
  CLI::App* attach = add_attach_command(app, attach_options, server_default);
  JobCommands jobs;
  add_job_commands(app, jobs, server_default);

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
  if (models.models->parsed()) return models_main(models);
  if (run->parsed()) return run_command(run_options);
  if (submit->parsed()) return submit_command(submit_options);
  if (attach->parsed()) return attach_command(attach_options);
  return job_main(jobs);
}
