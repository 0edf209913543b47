// Job ids are capabilities: 128 bits from the kernel's random source, "j-" and 32 hex digits. They
// once came from mt19937_64, whose outputs follow from 312 earlier ones: a client could predict
// another's id and cancel that job.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "service/server/job_manager.hpp"

namespace ukes::server {
namespace {

TEST(JobIds, AreDistinct128BitHex) {
  ServerOptions o;
  o.max_concurrent_jobs = 1;
  o.max_queued_jobs = 1000;
  o.threads = 1;
  o.device = Device::kCpu;
  JobManager jobs(o);
  v1::SubmitJobRequest request;
  request.set_spec_json(R"({"model": "duffing", "integrator": {"method": "rk4", "t_end": 0.01},
                            "output": {"samples": 2}})");
  const std::regex format("j-[0-9a-f]{32}");
  std::set<std::string> ids;
  std::set<char> first_digits;
  for (int k = 0; k < 200; ++k) {
    const std::string id = jobs.submit(request)->id();
    EXPECT_TRUE(std::regex_match(id, format)) << id;
    ids.insert(id);
    first_digits.insert(id[2]);
  }
  EXPECT_EQ(ids.size(), 200u);
  EXPECT_GT(first_digits.size(), 8u);  // not a counter or a timestamp
  jobs.shutdown();
}

}  // namespace
}  // namespace ukes::server
