// Following one job's result stream to its end: resuming it after transient breaks, checking
// that a job that succeeded sent everything, and, for a run of its own, writing its files and
// summary. A sharded run (client/sharded_run.cpp) follows one job per shard, side by side.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "client/remote.hpp"
#include "client/summary.hpp"
#include "service/protocol/result_assembler.hpp"

namespace ukes::cli {

// Standard error for the followers of one command, from any thread: notes, and one progress bar
// that a note clears first.
class Console {
 public:
  explicit Console(bool interactive) : bar_(interactive) {}
  void note(const std::string& message);
  void show(const v1::Progress& progress);
  void clear();

 private:
  std::mutex mutex_;
  ProgressBar bar_;
};

class JobFollower {
 public:
  // `on_progress`, when given, takes the job's progress instead of the console's bar.
  JobFollower(v1::UkesService::Stub& stub, std::string server, ResultFiles files, Console& console,
              std::function<void(const v1::Progress&)> on_progress = nullptr);

  // Follows the job from the stream `open` starts to its end; a job that succeeded has its files
  // written and its summary printed. Returns the exit code.
  int run(const StreamOpener& open);
  // Follows the job to its end only: kExitOk when it succeeded and sent everything (assembler()
  // then holds its spec and outcome); otherwise the reason is printed and the exit code returned.
  int run_to_end(const StreamOpener& open);

  const ResultAssembler& assembler() const { return assembler_; }
  const std::string& server() const { return server_; }

 private:
  template <class Then>
  int guarded(const StreamOpener& open, Then then);
  std::optional<int> follow(const StreamOpener& open);
  std::optional<int> unresumable(const grpc::Status& status);
  void wait_to_resume(const grpc::Status& status);
  grpc::Status read_stream(const StreamOpener& open);
  StreamOpener resume_opener() const;
  void on_chunk(const v1::StreamJobResultsResponse& chunk);
  void on_header();
  void show(const v1::Progress& progress);
  int check_end();
  int write_and_report();
  void check_complete() const;
  void note(const std::string& message) { console_.note(message); }
  const std::string& job_id() const { return assembler_.header().job_id(); }
  std::string reattach_hint() const;

  v1::UkesService::Stub& stub_;
  const std::string server_;
  const ResultFiles files_;
  Console& console_;
  std::function<void(const v1::Progress&)> on_progress_;
  bool writes_files_ = false;  // run(): this job's own files (not a shard's)
  ResultAssembler assembler_;
  int failures_ = 0;  // reconnects in a row that brought no chunk
  std::chrono::milliseconds backoff_;
};

}  // namespace ukes::cli
