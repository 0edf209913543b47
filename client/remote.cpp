#include "client/remote.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <thread>

#include "client/commands.hpp"
#include "service/protocol/metadata.hpp"
#include "service/protocol/pem_file.hpp"
#include "service/protocol/result_assembler.hpp"

namespace ukes::cli {

namespace {

constexpr int kMaxResumes = 5;
constexpr std::chrono::milliseconds kFirstBackoff{200};
constexpr std::chrono::milliseconds kRedrawInterval{100};
constexpr std::chrono::seconds kLogInterval{2};  // progress lines when not on a terminal
constexpr int kBarWidth = 16;

// Ends a follow early: printed as "ukes: <what>", and the process exits with `code`.
class FollowError : public std::runtime_error {
 public:
  FollowError(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// Breaks that a fresh stream may get past; anything else (NOT_FOUND, OUT_OF_RANGE, ...) is final.
bool is_transient(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::INTERNAL:
    case grpc::StatusCode::UNKNOWN:
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return true;
    default:
      return false;
  }
}

std::string format_duration(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  char text[64];
  if (s < 60)
    std::snprintf(text, sizeof text, "%lld s", s);
  else if (s < 3600)
    std::snprintf(text, sizeof text, "%lld min %02lld s", s / 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%lld h %02lld min", s / 3600, s / 60 % 60);
  return text;
}

int terminal_columns() {
  winsize size{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

std::string bar_graphic(const v1::Progress& p, int width) {
  const double fraction = p.systems_total() > 0
                              ? std::clamp(static_cast<double>(p.systems_done()) /
                                               static_cast<double>(p.systems_total()),
                                           0.0, 1.0)
                              : 0.0;
  const auto filled = static_cast<std::size_t>(fraction * width);
  std::string bar(1, '[');
  bar.append(filled, '#');
  bar.append(static_cast<std::size_t>(width) - filled, '-');
  bar.append("] ");
  return bar;
}

// Percent done, rounded down so that 100.0 means all of them.
double percent_done(const v1::Progress& p) {
  if (p.systems_total() <= 0) return 0.0;
  return std::floor(1000.0 * static_cast<double>(p.systems_done()) /
                    static_cast<double>(p.systems_total())) /
         10.0;
}

// Done and total systems and percent as `counts_format` has them, then rate and ETA when known.
std::string progress_line(const v1::Progress& p, const char* counts_format) {
  char text[160];
  std::snprintf(text, sizeof text, counts_format, static_cast<long long>(p.systems_done()),
                static_cast<long long>(p.systems_total()), percent_done(p));
  std::string s = text;
  if (p.system_steps_per_s() > 0) {
    std::snprintf(text, sizeof text, ", %.3g system-steps/s", p.system_steps_per_s());
    s += text;
  }
  if (p.eta_s() >= 0 && p.systems_done() < p.systems_total())
    s += ", ETA " + format_duration(p.eta_s());
  return s;
}

// Follows one job's result log to its end; see follow_job.
class JobFollower {
 public:
  JobFollower(v1::UkesService::Stub& stub, const std::string& server, const ResultFiles& files)
      : stub_(stub), server_(server), files_(files), bar_(isatty(STDERR_FILENO) != 0) {}

  int run(const StreamOpener& open) {
    try {
      return follow(open);
    } catch (const FollowError& e) {
      bar_.clear();
      std::fprintf(stderr, "ukes: %s\n", e.what());
      return e.code();
    } catch (const std::exception& e) {
      bar_.clear();
      std::fprintf(stderr, "ukes: bad result stream from %s: %s\n", server_.c_str(), e.what());
      return kExitFailure;
    }
  }

 private:
  int follow(const StreamOpener& open) {
    grpc::Status status = read_stream(open);
    while (!assembler_.finished()) {
      if (const auto code = unresumable(status)) return *code;
      wait_to_resume(status);
      const std::int64_t before = assembler_.last_sequence();
      status = read_stream(resume_opener());
      if (assembler_.last_sequence() > before) {  // it got going again: a fresh allowance
        failures_ = 0;
        backoff_ = kFirstBackoff;
      }
    }
    return report_end();
  }

  // A stream that ended before the job did can be resumed once its header named the job, unless
  // the server said something final (NOT_FOUND, OUT_OF_RANGE, ...): then reports why and returns
  // the exit code.
  std::optional<int> unresumable(const grpc::Status& status) {
    if (assembler_.has_header() && (status.ok() || is_transient(status.error_code())))
      return std::nullopt;
    bar_.clear();
    if (status.ok()) throw std::runtime_error("the stream ended before its header");
    return report_rpc_error(status, server_);
  }

  // Says why the stream is resumed and waits out the backoff; gives up after kMaxResumes tries
  // in a row that brought nothing.
  void wait_to_resume(const grpc::Status& status) {
    const std::string why = status.ok() ? "it ended before the job did"
                                        : std::string(status_code_name(status.error_code())) +
                                              ": " + status.error_message();
    if (failures_ == kMaxResumes)
      throw FollowError(kExitFailure, "lost the results of job " + job_id() + " (" + why +
                                          ") and gave up after " + std::to_string(kMaxResumes) +
                                          " reconnects; " + reattach_hint());
    if (failures_ == 0)
      note("the result stream broke (" + why + "); reconnecting to resume after chunk " +
           std::to_string(assembler_.last_sequence()));
    else
      note("reconnect " + std::to_string(failures_) + " of " + std::to_string(kMaxResumes) +
           " failed (" + why + "); trying again");
    std::this_thread::sleep_for(backoff_);
    backoff_ *= 2;
    ++failures_;
  }

  // Reads one stream to its end, feeding every chunk to the assembler.
  grpc::Status read_stream(const StreamOpener& open) {
    for (QueueWait queue;;) {
      grpc::ClientContext context;
      const std::unique_ptr<ResultReader> reader = open(stub_, context);
      v1::StreamJobResultsResponse chunk;
      try {
        while (reader->Read(&chunk)) on_chunk(chunk);
      } catch (...) {
        context.TryCancel();
        while (reader->Read(&chunk)) {
        }
        reader->Finish();
        throw;
      }
      const grpc::Status status = reader->Finish();
      // Only Simulate is refused for a full queue, before its header.
      if (assembler_.has_header() || !queue.again(context, status)) return status;
    }
  }

  StreamOpener resume_opener() const {
    v1::StreamJobResultsRequest request;
    request.set_job_id(job_id());
    request.set_resume_after(assembler_.last_sequence());
    return [request](v1::UkesService::Stub& stub, grpc::ClientContext& context) {
      return std::unique_ptr<ResultReader>(stub.StreamJobResults(&context, request));
    };
  }

  void on_chunk(const v1::StreamJobResultsResponse& chunk) {
    assembler_.add(chunk);
    if (chunk.has_header()) on_header();
    if (chunk.has_progress()) bar_.show(assembler_.progress());
  }

  void on_header() {
    const v1::JobHeader& h = assembler_.header();
    note("job " + h.job_id() + " on " + server_ + " (" + reattach_hint() + ")");
    if ((!files_.out.empty() || !files_.h5.empty()) && !h.system_summaries())
      throw FollowError(kExitUsage, "job " + h.job_id() +
                                        " was submitted without per-system summaries "
                                        "(--no-summaries): it cannot give --out or --h5 files");
    if (!files_.h5.empty() && h.trajectory_ids_size() == 0)
      note("note: output.trajectories records no system: " + files_.h5 +
           " will hold no trajectories");
    v1::Progress start;
    start.set_systems_total(h.count());
    start.set_eta_s(-1);
    bar_.show(start);
  }

  int report_end() {
    bar_.clear();
    const v1::JobEnd& end = assembler_.end();
    if (end.state() != v1::JOB_STATE_SUCCEEDED) {
      std::fprintf(stderr, "ukes: job %s %s%s%s\n", job_id().c_str(), job_state_name(end.state()),
                   end.message().empty() ? "" : ": ", end.message().c_str());
      return kExitFailure;
    }
    check_complete();
    // A job that succeeded can still have news (the GPU failed and the CPU finished the job).
    if (!end.message().empty())
      std::fprintf(stderr, "ukes: job %s: %s\n", job_id().c_str(), end.message().c_str());
    const RunSpec& spec = assembler_.spec();
    const RunOutcome& outcome = assembler_.outcome();
    try {
      write_result_files(files_, spec, outcome);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ukes: %s\n", e.what());
      return kExitFailure;
    }
    print_summary(spec, outcome, end.steps_total());
    print_written(files_, outcome);
    return kExitOk;
  }

  // A job that succeeded has sent its statistics and, unless left out, every system's summary.
  void check_complete() const {
    if (!assembler_.has_statistics())
      throw std::runtime_error("job " + job_id() + " succeeded without its statistics");
    const v1::JobHeader& h = assembler_.header();
    if (h.system_summaries() && assembler_.systems_received() != h.count())
      throw std::runtime_error("job " + job_id() + " succeeded with the summaries of " +
                               std::to_string(assembler_.systems_received()) + " of " +
                               std::to_string(h.count()) + " systems");
  }

  void note(const std::string& message) {
    bar_.clear();
    std::fprintf(stderr, "ukes: %s\n", message.c_str());
    std::fflush(stderr);
  }

  const std::string& job_id() const { return assembler_.header().job_id(); }
  std::string reattach_hint() const {
    return "reattach: ukes attach " + job_id() + " --server " + server_;
  }

  v1::UkesService::Stub& stub_;
  const std::string server_;
  const ResultFiles files_;
  ResultAssembler assembler_;
  ProgressBar bar_;
  int failures_ = 0;  // reconnects in a row that brought no chunk
  std::chrono::milliseconds backoff_ = kFirstBackoff;
};

}  // namespace

namespace {

ConnectionSecurity& connection_security() {
  static ConnectionSecurity security;
  return security;
}

std::shared_ptr<grpc::ChannelCredentials> channel_credentials() {
  const ConnectionSecurity& s = connection_security();
  if (!s.tls()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  if (!s.ca_file.empty()) ssl.pem_root_certs = read_pem_file(s.ca_file, "--ca");
  if (!s.client_cert.empty() || !s.client_key.empty()) {
    ssl.pem_cert_chain = read_pem_file(s.client_cert, "--client-cert");
    ssl.pem_private_key = read_pem_file(s.client_key, "--client-key");
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::SslCredentials(ssl);
  if (s.token.empty()) return credentials;
  return grpc::CompositeChannelCredentials(credentials, grpc::AccessTokenCredentials(s.token));
}

}  // namespace

void set_connection_security(ConnectionSecurity security) {
  connection_security() = std::move(security);
  channel_credentials();  // unreadable files fail here, before any call
}

std::shared_ptr<grpc::Channel> make_channel(const std::string& server) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(server, channel_credentials(), args);
}

const char* status_code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN_CODE";
  }
}

int report_rpc_error(const grpc::Status& status, const std::string& server) {
  const std::string& message = status.error_message();
  switch (status.error_code()) {
    case grpc::StatusCode::INVALID_ARGUMENT:
      std::fprintf(stderr, "ukes: spec error: %s\n", message.c_str());
      return kExitUsage;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      std::fprintf(stderr, "ukes: limit exceeded: %s\n", message.c_str());
      return kExitUsage;
    case grpc::StatusCode::UNAVAILABLE:
      std::fprintf(stderr, "ukes: cannot reach server %s: %s\n", server.c_str(), message.c_str());
      return kExitFailure;
    default:
      std::fprintf(stderr, "ukes: server error (%s): %s\n", status_code_name(status.error_code()),
                   message.c_str());
      return kExitFailure;
  }
}

bool QueueWait::again(const grpc::ClientContext& context, const grpc::Status& status) {
  if (status.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) return false;
  const auto& trailers = context.GetServerTrailingMetadata();
  const auto hint = trailers.find(kRetryAfterMetadataKey);
  if (hint == trailers.end()) return false;
  double after_s = 1.0;
  try {
    after_s =
        std::clamp(std::stod(std::string(hint->second.data(), hint->second.size())), 0.1, 30.0);
  } catch (const std::exception&) {
  }
  // 1, 2, 4, ... times the hint, at most 30 s a wait.
  const double wait_s = std::min(30.0, after_s * std::pow(2.0, std::min(tries_, 5)));
  const auto waited = std::chrono::steady_clock::now() - start_;
  if (waited + std::chrono::duration<double>(wait_s) > kMaxWait) return false;
  if (tries_ == 0)
    std::fprintf(stderr, "ukes: %s; waiting to try again (up to %lld s)\n",
                 status.error_message().c_str(), static_cast<long long>(kMaxWait.count()));
  ++tries_;
  std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
  return true;
}

std::string progress_text(const v1::Progress& p) {
  return progress_line(p, "%lld / %lld systems (%.1f%%)");
}

void ProgressBar::show(const v1::Progress& progress) {
  const auto now = std::chrono::steady_clock::now();
  if (!interactive_) {
    if (last_draw_ != std::chrono::steady_clock::time_point{} && now - last_draw_ < kLogInterval)
      return;
    last_draw_ = now;
    std::fprintf(stderr, "ukes: %s\n", progress_text(progress).c_str());
    std::fflush(stderr);
    return;
  }
  if (drawn_ > 0 && now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  const int columns = terminal_columns();
  const std::string text = progress_line(progress, "%lld/%lld (%.1f%%)");  // compact
  // A bar of fixed width where the line has room for it, so that it does not jitter.
  const bool room = static_cast<int>(text.size()) + kBarWidth + 4 <= columns;
  std::string line = room ? bar_graphic(progress, kBarWidth) + text : text;
  line.resize(std::min(line.size(), static_cast<std::size_t>(std::max(columns - 1, 1))));
  const std::size_t width = line.size();
  if (line.size() < drawn_) line.append(drawn_ - line.size(), ' ');  // cover the longer old line
  std::fprintf(stderr, "\r%s", line.c_str());
  std::fflush(stderr);
  drawn_ = std::max<std::size_t>(width, 1);
}

void ProgressBar::clear() {
  if (drawn_ == 0) return;
  std::fprintf(stderr, "\r%s\r", std::string(drawn_, ' ').c_str());
  std::fflush(stderr);
  drawn_ = 0;
}

int follow_job(v1::UkesService::Stub& stub, const std::string& server, const StreamOpener& open,
               const ResultFiles& files) {
  JobFollower follower(stub, server, files);
  return follower.run(open);
}

}  // namespace ukes::cli
