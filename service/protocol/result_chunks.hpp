// Results as protocol chunks (server side): per-system summaries and trajectories cut into
// messages of at most kChunkBytes of payload, and ensemble statistics. The inverse is
// result_assembler.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/ensemble/statistics.hpp"
#include "service/engine/engine.hpp"
#include "service/runspec/run_spec.hpp"
#include "ukes/v1/ukes.pb.h"

namespace ukes {

// Payload budget of one chunk: well below gRPC's default 4 MiB message limit.
inline constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

v1::SystemStatus status_to_proto(std::int32_t status);
// -1 for SYSTEM_STATUS_UNSPECIFIED or an unknown value.
std::int32_t status_from_proto(v1::SystemStatus status);

// Summaries of every system in `part` (the results of systems first_id .. first_id + count - 1),
// with the inputs `inputs` gave them (the same systems).
std::vector<v1::SystemSummaries> summary_chunks(const Batch& inputs, const BatchResults& part,
                                                std::int32_t first_id,
                                                std::size_t budget = kChunkBytes);

// Trajectories of the systems `part` recorded (part.traj_ids are local: id - first_id), with the
// fields `output` asks for. A system whose samples do not fit in one chunk is split by samples.
std::vector<v1::TrajectoryChunk> trajectory_chunks(const BatchResults& part, std::int32_t first_id,
                                                   const OutputSpec& output,
                                                   std::size_t budget = kChunkBytes);

// Progress after a finished slice of a run of `total` systems (eta_s -1 while unknown).
v1::Progress progress_after(const SliceDone& slice, int total);

void statistics_to_proto(const EnsembleStatistics& s, v1::EnsembleStatistics* out);
EnsembleStatistics statistics_from_proto(const v1::EnsembleStatistics& s);

}  // namespace ukes
