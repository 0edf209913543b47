// Runs one job on the ensemble engine, in chunks of systems, publishing as it goes: after each
// chunk its per-system summaries, the trajectories of the recorded systems in it, and a progress
// report; at the end the ensemble statistics and the JobEnd. Cancellation and the job's timeout
// are checked between and inside chunks, and everything published before stays available.
#pragma once

#include "service/server/job.hpp"

namespace ukes::server {

// Seconds of engine work per chunk (adapts the number of systems to measured speed).
void run_job(Job& job, double chunk_target_s);

// Publishes the header (the first chunk of every job).
void publish_header(Job& job, const std::string& backend);

}  // namespace ukes::server
