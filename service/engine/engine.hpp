// Runs a parsed spec in-process on the backend the spec resolved to (spec.device_resolved): the
// ensemble, then its statistics (on the host, as the server computes them).
#pragma once

#include <string>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/ensemble/statistics.hpp"
#include "service/runspec/run_spec.hpp"

namespace ukes {

struct ExecuteOptions {
  int threads = 0;  // CPU threads; <= 0: one per hardware thread
};

struct RunOutcome {
  BatchResults results;
  EnsembleStatistics statistics;
  double elapsed_s = 0.0;  // wall time of the ensemble integration
  double total_s = 0.0;    // integration and statistics
  std::string backend;     // "cpu" or "gpu"
  int threads = 0;         // CPU threads used (0 on the GPU)
  // Set when the spec resolved to the GPU, asked for `auto`, and the GPU broke during the run
  // (GpuUnusableError): why the batch ran on the CPU after all.
  std::string fallback_reason;
};

RunOutcome execute(const RunSpec& spec, const ExecuteOptions& options = {});

}  // namespace ukes
