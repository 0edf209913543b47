// Client side of a job's result stream: takes the chunks in order and rebuilds the RunSpec and
// RunOutcome an in-process run would have produced (the systems' inputs included, from the
// stream), so the same writers make the same files.
#pragma once

#include <cstdint>
#include <optional>

#include "service/engine/engine.hpp"
#include "service/runspec/run_spec.hpp"
#include "ukes/v1/ukes.pb.h"

namespace ukes {

class ResultAssembler {
 public:
  // The header announces how many systems, samples and trajectories follow, and the assembler
  // allocates their buffers up front: `max_result_bytes` bounds that memory (the systems' inputs
  // and results and the recorded trajectories); a header that needs more is refused. The default
  // is this machine's physical memory, so that a header no client could hold is refused with a
  // clear error rather than by std::bad_alloc or the OOM killer.
  ResultAssembler();
  explicit ResultAssembler(std::int64_t max_result_bytes);

  // Feeds the next chunk. Throws std::runtime_error when it is out of order (its sequence is not
  // last_sequence() + 1) or does not fit the header, and when the header is inconsistent or needs
  // more than max_result_bytes.
  void add(const v1::StreamJobResultsResponse& chunk);

  std::int64_t last_sequence() const { return last_sequence_; }
  bool has_header() const { return spec_.has_value(); }
  bool finished() const { return finished_; }
  const v1::JobHeader& header() const { return header_; }
  const v1::JobEnd& end() const { return end_; }
  const v1::Progress& progress() const { return progress_; }
  // Systems whose summaries have arrived.
  std::int64_t systems_received() const { return systems_received_; }
  bool has_statistics() const { return has_statistics_; }

  // The spec the server ran, rebuilt from the header (requires has_header()). Its batch holds
  // the inputs of the systems whose summaries have arrived (as the server sent them; NaN for the
  // others): the spec's samplers are not re-run here.
  const RunSpec& spec() const { return *spec_; }
  // The results so far; complete once finished() with state SUCCEEDED.
  const RunOutcome& outcome() const { return outcome_; }

 private:
  void on_header(const v1::JobHeader& h);
  void on_summaries(const v1::SystemSummaries& s);
  void on_trajectory(const v1::TrajectoryChunk& c);

  std::int64_t max_result_bytes_;
  std::int64_t last_sequence_ = 0;
  bool finished_ = false;
  bool has_statistics_ = false;
  std::int64_t systems_received_ = 0;
  v1::JobHeader header_;
  v1::JobEnd end_;
  v1::Progress progress_;
  std::optional<RunSpec> spec_;
  RunOutcome outcome_;
};

}  // namespace ukes
