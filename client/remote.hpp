// Talking to a ukes-server: the channel, what a failed call means for the user, waiting out a
// full queue, and the progress bar; following a job's result stream is client/job_follower.hpp.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "client/summary.hpp"
#include "service/protocol/job_state.hpp"
#include "ukes/v1/ukes.grpc.pb.h"

namespace ukes::cli {

// How channels reach a server that serves TLS or asks for a token (service/server/auth.hpp): set
// once from `ukes --ca --token --client-cert --client-key` or UKES_CA, UKES_TOKEN, ...
struct ConnectionSecurity {
  std::string ca_file;      // PEM roots that signed the server's certificate ("": the system's)
  std::string token;        // sent as `authorization: Bearer TOKEN`, over TLS only
  std::string client_cert;  // PEM certificate chain and key for mutual TLS
  std::string client_key;
  bool tls() const { return !ca_file.empty() || !token.empty() || !client_cert.empty(); }
};
// std::runtime_error naming the flag when a PEM file cannot be read.
void set_connection_security(ConnectionSecurity security);

// A channel to HOST:PORT that accepts result chunks up to 64 MiB: TLS (with the token and client
// certificate) when ConnectionSecurity asks for it, plain otherwise. std::runtime_error when a
// PEM file cannot be read.
std::shared_ptr<grpc::Channel> make_channel(const std::string& server);

// "UNAVAILABLE", "INVALID_ARGUMENT", ...
const char* status_code_name(grpc::StatusCode code);

// Prints why a call failed and returns the exit code: spec errors and limits are the user's
// (kExitUsage), an unreachable server and other errors are failures (kExitFailure).
int report_rpc_error(const grpc::Status& status, const std::string& server);

// Waits out a server's full queue: a submission refused with a retry hint (the queue is full,
// not a limit) is tried again after the hinted delay, growing, for up to kMaxWait in all.
class QueueWait {
 public:
  static constexpr std::chrono::seconds kMaxWait{600};
  QueueWait() : start_(std::chrono::steady_clock::now()) {}
  // After a failed submission: sleeps and returns true when it should be tried again.
  bool again(const grpc::ClientContext& context, const grpc::Status& status);

 private:
  std::chrono::steady_clock::time_point start_;
  int tries_ = 0;
};

// "4096 / 100000 systems (4.1%), 1.23e+06 system-steps/s, ETA 12 s" (rate and ETA when known).
std::string progress_text(const v1::Progress& progress);

// Progress on standard error: on a terminal a bar redrawn in place at most ~10 times a second;
// otherwise (a log file, a pipe) a plain line every few seconds.
class ProgressBar {
 public:
  explicit ProgressBar(bool interactive) : interactive_(interactive) {}
  ~ProgressBar() { clear(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void show(const v1::Progress& progress);
  // Erases the bar (before any other message, and at the end).
  void clear();

 private:
  bool interactive_;
  std::size_t drawn_ = 0;  // characters on the line now
  std::chrono::steady_clock::time_point last_draw_{};
};

using ResultReader = grpc::ClientReaderInterface<v1::StreamJobResultsResponse>;
// Opens the first stream of a job's results (Simulate, or StreamJobResults from the start).
using StreamOpener =
    std::function<std::unique_ptr<ResultReader>(v1::UkesService::Stub&, grpc::ClientContext&)>;

// Follows a job's results from the stream `open` starts to the job's end, resuming with
// StreamJobResults after transient breaks. A job that succeeds is summarized on standard output
// and its files are written; returns the exit code (client/job_follower.cpp).
int follow_job(v1::UkesService::Stub& stub, const std::string& server, const StreamOpener& open,
               const ResultFiles& files);

}  // namespace ukes::cli
