#include "service/protocol/job_state.hpp"

namespace ukes {

const char* job_state_name(v1::JobState state) {
  switch (state) {
    case v1::JOB_STATE_QUEUED:
      return "queued";
    case v1::JOB_STATE_RUNNING:
      return "running";
    case v1::JOB_STATE_SUCCEEDED:
      return "succeeded";
    case v1::JOB_STATE_FAILED:
      return "failed";
    case v1::JOB_STATE_CANCELLED:
      return "cancelled";
    case v1::JOB_STATE_DEADLINE_EXCEEDED:
      return "deadline_exceeded";
    default:
      return "unspecified";
  }
}

bool is_final(v1::JobState state) {
  return state == v1::JOB_STATE_SUCCEEDED || state == v1::JOB_STATE_FAILED ||
         state == v1::JOB_STATE_CANCELLED || state == v1::JOB_STATE_DEADLINE_EXCEEDED;
}

}  // namespace ukes
