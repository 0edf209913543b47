// Job states as words, for logs and for people.
#pragma once

#include "ukes/v1/ukes.pb.h"

namespace ukes {

// "queued", "running", "succeeded", "failed", "cancelled", "deadline_exceeded" ("unspecified" for
// anything else).
const char* job_state_name(v1::JobState state);

// Succeeded, failed, cancelled or deadline exceeded: the job will not change any more.
bool is_final(v1::JobState state);

}  // namespace ukes
