// The subcommands of the `ukes` command-line client.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "service/engine/shards.hpp"
#include "service/runspec/run_spec.hpp"

namespace ukes::cli {

// Exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the run failed, or the server could not be reached
inline constexpr int kExitUsage = 2;    // bad command line or bad spec

// `ukes models [--json]`
int models_command(bool json);
// `ukes models --server HOST:PORT [--json]`: the server's models, with the ids of those the
// caller registered (every page of ListModels).
int server_models_command(const std::string& server, bool json);
// `ukes models register FILE [--server]`: prints the content id the server keeps the model under.
int register_command(const std::string& path, const std::string& server);
// `ukes models delete ID [--server]`: removes a model the caller registered.
int delete_model_command(const std::string& id, const std::string& server);
// Reads a model definition file (at most 1 MiB); kExitUsage with the reason when it cannot.
int read_definition_file(const std::string& path, std::string& text);
// `ukes models validate FILE [--json]`: kExitUsage (and the error, with its field and column) when
// the definition is invalid.
int validate_command(const std::string& path, bool json);

struct RunOptions {
  std::string spec;           // path, or "-" for stdin
  std::string out;            // results JSON ("" = none)
  std::string h5;             // trajectories HDF5 ("" = none)
  int threads = 0;            // <= 0: all hardware threads (in-process only)
  std::string server;         // "" = run in-process; "A,B,...": sharded over those servers
  std::int64_t count = 0;     // > 0: replaces sweep.count
  int shards = 0;             // > 0: shards of the run, dealt to the servers in turn
  bool each_address = false;  // every address a --server name resolves to is a server
  std::string devices;        // "0,2": the spec's device_ids (the GPUs the run spreads over)
};

// `ukes run SPEC [--out results.json] [--h5 traj.h5] [--threads N] [--count N] [--devices LIST]
//               [--server HOST:PORT[,HOST:PORT...]] [--shards N]`
int run_command(const RunOptions& options);
// `ukes run --server`: the same run on a server (remote_commands.cpp), or sharded over several.
int run_on_server(const RunOptions& options);

// How an in-process run parses its spec: with this machine's GPU when the spec may use one.
ParseOptions local_parse_options(const nlohmann::json& doc);

// Runs `parse`: a SpecError or LimitError it throws is printed ("spec error: ...", "limit
// exceeded: ...") and returned as kExitUsage; kExitOk otherwise.
int spec_errors_as_usage(const std::function<void()>& parse);

struct ResultFiles;  // client/summary.hpp
// Fails before a long run when a result could not be written: kExitUsage when --out and --h5
// name one file, kExitFailure when either cannot be written (said on stderr).
int check_result_files(const ResultFiles& files);

// Whether this process was started by an MPI launcher (mpirun, srun); always false in a build
// without MPI. `ukes run` in-process then runs as one rank of a sharded run (mpi_run.cpp).
bool launched_by_mpi();
int run_as_mpi_rank(const RunOptions& options);

// "a:1,b:2" -> {"a:1", "b:2"} (empty entries dropped).
std::vector<std::string> split_servers(const std::string& list);
// Every address each HOST:PORT resolves to, as gRPC targets ("ipv4:10.0.0.7:50051",
// "ipv6:[fd00::7]:50051"), in the resolver's order per name, duplicates dropped.
// std::runtime_error naming the server when a name does not resolve.
std::vector<std::string> each_address(const std::vector<std::string>& servers);
// The whole run from its shards (merge_shards): files written and summary printed as one
// process's run; the exit code.
int report_merged(const std::vector<ShardResult>& shards, const ResultFiles& files);
// The run `text` describes in `shards` shards, shard k on servers[k % servers.size()], followed
// side by side and merged into one run's files and summary (sharded_run.cpp).
int run_sharded(const std::vector<std::string>& servers, int shards, const std::string& text,
                const ResultFiles& files);

// Reads the spec document from `path` ("-": standard input) and, when `count` > 0, replaces its
// sweep.count; `devices` ("0,2", from --devices) replaces its device_ids. On failure prints why
// and returns kExitUsage; kExitOk otherwise.
int load_spec_text(const std::string& path, std::int64_t count, std::string& text,
                   const std::string& devices = "");

// UKES_SERVER from the environment, else 127.0.0.1:50051.
std::string default_server();

struct SubmitOptions {
  std::string spec;
  std::string server;
  std::int64_t count = 0;  // > 0: replaces sweep.count
  double timeout_s = 0;    // 0: no limit
  bool no_summaries = false;
};

// `ukes submit SPEC [--server] [--count N] [--timeout S] [--no-summaries]`: prints the job id.
int submit_command(const SubmitOptions& options);

struct AttachOptions {
  std::string job_id;
  std::string server;
  std::string out;
  std::string h5;
};

// `ukes attach JOB_ID [--server] [--out] [--h5]`: follows a job's results from the start.
int attach_command(const AttachOptions& options);

// `ukes status JOB_ID [--server] [--json]`
int status_command(const std::string& job_id, const std::string& server, bool json);

// `ukes cancel JOB_ID [--server]`
int cancel_command(const std::string& job_id, const std::string& server);

// `ukes info [--server] [--json]`
int info_command(const std::string& server, bool json);

}  // namespace ukes::cli
