#include "client/job_follower.hpp"

#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <thread>
#include <utility>

#include "client/commands.hpp"
#include "service/protocol/job_state.hpp"

namespace ukes::cli {

namespace {

constexpr int kMaxResumes = 5;
constexpr std::chrono::milliseconds kFirstBackoff{200};

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

}  // namespace

void Console::note(const std::string& message) {
  const std::lock_guard lock(mutex_);
  bar_.clear();
  std::fprintf(stderr, "ukes: %s\n", message.c_str());
  std::fflush(stderr);
}

void Console::show(const v1::Progress& progress) {
  const std::lock_guard lock(mutex_);
  bar_.show(progress);
}

void Console::clear() {
  const std::lock_guard lock(mutex_);
  bar_.clear();
}

JobFollower::JobFollower(v1::UkesService::Stub& stub, std::string server, ResultFiles files,
                         Console& console, std::function<void(const v1::Progress&)> on_progress)
    : stub_(stub),
      server_(std::move(server)),
      files_(std::move(files)),
      console_(console),
      on_progress_(std::move(on_progress)),
      backoff_(kFirstBackoff) {}

template <class Then>
int JobFollower::guarded(const StreamOpener& open, Then then) {
  try {
    if (const auto code = follow(open)) return *code;
    return then();
  } catch (const FollowError& e) {
    note(e.what());
    return e.code();
  } catch (const std::exception& e) {
    note("bad result stream from " + server_ + ": " + e.what());
    return kExitFailure;
  }
}

int JobFollower::run(const StreamOpener& open) {
  writes_files_ = true;
  return guarded(open, [this] {
    const int code = check_end();
    return code != kExitOk ? code : write_and_report();
  });
}

int JobFollower::run_to_end(const StreamOpener& open) {
  return guarded(open, [this] { return check_end(); });
}

std::optional<int> JobFollower::follow(const StreamOpener& open) {
  grpc::Status status = read_stream(open);
  while (!assembler_.finished()) {
    if (const auto code = unresumable(status)) return code;
    wait_to_resume(status);
    const std::int64_t before = assembler_.last_sequence();
    status = read_stream(resume_opener());
    if (assembler_.last_sequence() > before) {  // it got going again: a fresh allowance
      failures_ = 0;
      backoff_ = kFirstBackoff;
    }
  }
  return std::nullopt;
}

// A stream that ended before the job did can be resumed once its header named the job, unless
// the server said something final (NOT_FOUND, OUT_OF_RANGE, ...): then reports why and returns
// the exit code.
std::optional<int> JobFollower::unresumable(const grpc::Status& status) {
  if (assembler_.has_header() && (status.ok() || is_transient(status.error_code())))
    return std::nullopt;
  console_.clear();
  if (status.ok()) throw std::runtime_error("the stream ended before its header");
  return report_rpc_error(status, server_);
}

// Says why the stream is resumed and waits out the backoff; gives up after kMaxResumes tries in a
// row that brought nothing.
void JobFollower::wait_to_resume(const grpc::Status& status) {
  const std::string why = status.ok() ? "it ended before the job did"
                                      : std::string(status_code_name(status.error_code())) + ": " +
                                            status.error_message();
  if (failures_ == kMaxResumes)
    throw FollowError(kExitFailure, "lost the results of job " + job_id() + " (" + why +
                                        ") and gave up after " + std::to_string(kMaxResumes) +
                                        " reconnects; " + reattach_hint());
  if (failures_ == 0)
    note("the result stream of job " + job_id() + " broke (" + why +
         "); reconnecting to resume after chunk " + std::to_string(assembler_.last_sequence()));
  else
    note("reconnect " + std::to_string(failures_) + " of " + std::to_string(kMaxResumes) +
         " to job " + job_id() + " failed (" + why + "); trying again");
  std::this_thread::sleep_for(backoff_);
  backoff_ *= 2;
  ++failures_;
}

// Reads one stream to its end, feeding every chunk to the assembler.
grpc::Status JobFollower::read_stream(const StreamOpener& open) {
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

StreamOpener JobFollower::resume_opener() const {
  v1::StreamJobResultsRequest request;
  request.set_job_id(job_id());
  request.set_resume_after(assembler_.last_sequence());
  return [request](v1::UkesService::Stub& stub, grpc::ClientContext& context) {
    return std::unique_ptr<ResultReader>(stub.StreamJobResults(&context, request));
  };
}

void JobFollower::on_chunk(const v1::StreamJobResultsResponse& chunk) {
  assembler_.add(chunk);
  if (chunk.has_header()) on_header();
  if (chunk.has_progress()) show(assembler_.progress());
}

void JobFollower::on_header() {
  const v1::JobHeader& h = assembler_.header();
  note("job " + h.job_id() + " on " + server_ + " (" + reattach_hint() + ")");
  if ((!files_.out.empty() || !files_.h5.empty()) && !h.system_summaries())
    throw FollowError(kExitUsage, "job " + h.job_id() +
                                      " was submitted without per-system summaries "
                                      "(--no-summaries): it cannot give --out or --h5 files");
  if (writes_files_ && !files_.h5.empty() && h.trajectory_ids_size() == 0)
    note("note: output.trajectories records no system: " + files_.h5 +
         " will hold no trajectories");
  v1::Progress start;
  start.set_systems_total(h.count());
  start.set_eta_s(-1);
  show(start);
}

void JobFollower::show(const v1::Progress& progress) {
  if (on_progress_)
    on_progress_(progress);
  else
    console_.show(progress);
}

// kExitOk when the job succeeded and sent everything; otherwise says why and returns the code.
int JobFollower::check_end() {
  console_.clear();
  const v1::JobEnd& end = assembler_.end();
  if (end.state() != v1::JOB_STATE_SUCCEEDED) {
    note("job " + job_id() + " " + job_state_name(end.state()) +
         (end.message().empty() ? "" : ": ") + end.message());
    return kExitFailure;
  }
  check_complete();
  // A job that succeeded can still have news (the GPU failed and the CPU finished the job).
  if (!end.message().empty()) note("job " + job_id() + ": " + end.message());
  return kExitOk;
}

int JobFollower::write_and_report() {
  const RunSpec& spec = assembler_.spec();
  const RunOutcome& outcome = assembler_.outcome();
  try {
    write_result_files(files_, spec, outcome);
  } catch (const std::exception& e) {
    note(e.what());
    return kExitFailure;
  }
  print_summary(spec, outcome, assembler_.end().steps_total());
  print_written(files_, outcome);
  return kExitOk;
}

// A job that succeeded has sent its statistics and, unless left out, every system's summary.
void JobFollower::check_complete() const {
  if (!assembler_.has_statistics())
    throw std::runtime_error("job " + job_id() + " succeeded without its statistics");
  const v1::JobHeader& h = assembler_.header();
  if (h.system_summaries() && assembler_.systems_received() != h.count())
    throw std::runtime_error("job " + job_id() + " succeeded with the summaries of " +
                             std::to_string(assembler_.systems_received()) + " of " +
                             std::to_string(h.count()) + " systems");
}

std::string JobFollower::reattach_hint() const {
  return "reattach: ukes attach " + job_id() + " --server " + server_;
}

int follow_job(v1::UkesService::Stub& stub, const std::string& server, const StreamOpener& open,
               const ResultFiles& files) {
  Console console(isatty(STDERR_FILENO) != 0);
  JobFollower follower(stub, server, files, console);
  return follower.run(open);
}

}  // namespace ukes::cli
