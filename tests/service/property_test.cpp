// A property test against a real server: four clients send a seeded random mix of valid specs,
// mutated specs (flipped, dropped and inserted bytes, wrong types, huge and non-finite numbers,
// non-ASCII and overlong names, NUL bytes), random protobuf bytes to every method, unknown job
// ids and cancels. Whatever arrives, the server must
//   - answer with a deliberate code (OK, INVALID_ARGUMENT, RESOURCE_EXHAUSTED, NOT_FOUND,
//     OUT_OF_RANGE), never UNKNOWN, INTERNAL, UNIMPLEMENTED or UNAVAILABLE;
//   - quote only printable ASCII, bounded, in messages and metadata;
//   - give every job it completes exactly the in-process run's numbers;
//   - stay up, healthy and logging JSON lines.
// Bounded: 4 x 150 requests of small specs. UKES_PROPERTY_SEED=N replays a run.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "grpc/health/v1/health.grpc.pb.h"
#include "tests/service/service_support.hpp"

namespace ukes::testing {
namespace {

// Valid specs small enough to run in milliseconds.
const char* const kBaseSpecs[] = {
    R"({"model": "duffing", "sweep": {"count": 6, "seed": 2,
        "vary": {"params.m1": {"uniform": [1.5, 2.5]}}},
        "integrator": {"method": "rk4", "t_end": 0.2, "dt": 0.01},
        "output": {"samples": 5, "trajectories": "first:2"}})",
    R"({"model": "pendulum_polar", "systems": [{}, {"params": {"L": 1.5}}],
        "integrator": {"method": "dopri5", "t_end": 0.5}, "output": {"samples": 4}})",
    R"({"model": "four_bar", "integrator": {"method": "rk4", "t_end": 0.1, "dt": 0.01},
        "stabilization": {"alpha": 5, "beta": 5}, "output": {"trajectories": "all", "samples": 3}})",
    R"({"model": "scara", "sweep": {"count": 3, "sampler": "sobol",
        "vary": {"q0[0]": {"normal": [0, 0.01]}}}, "assemble": true,
        "integrator": {"method": "rk4", "t_end": 0.05, "dt": 0.005}})",
};

const char* const kMethods[] = {"ListModels",       "DescribeModel", "RegisterModel", "DeleteModel",
                                "GetServerInfo",    "SubmitJob",     "Simulate",      "GetJob",
                                "StreamJobResults", "CancelJob"};

// Strings that stress parsers and quoting.
const char* const kNasty[] = {
    "m\xc3\xb6"
    "del",
    "\t",
    "\n",
    "\xff\xfe",
    "\\u0000",
    "1e999",
    "-1e308",
    "NaN",
    "[]",
    "{}",
    "null",
    "\"\"",
    "\xe4\xb8\xad",
    "9223372036854775808",
    "-0",
    "true"};

class Fuzz {
 public:
  explicit Fuzz(std::uint64_t seed) : rng_(seed) {}
  std::size_t below(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  // A spec's text: a valid base, or one mutated in one to three ways.
  std::string spec(bool* valid) {
    std::string text = kBaseSpecs[below(std::size(kBaseSpecs))];
    *valid = chance(0.3);
    if (*valid) return text;
    const std::size_t mutations = 1 + below(3);
    for (std::size_t k = 0; k < mutations && !text.empty(); ++k) {
      const std::size_t at = below(text.size());
      switch (below(6)) {
        case 0:
          text[at] = static_cast<char>(below(256));
          break;
        case 1:
          text.erase(at, 1 + below(8));
          break;
        case 2:
          text.insert(at, kNasty[below(std::size(kNasty))]);
          break;
        case 3:  // an extra member with a nasty name
          text.insert(1, std::string("\"") + kNasty[below(std::size(kNasty))] + "\": 1, ");
          break;
        case 4:  // a long name
          text.insert(1, "\"" + std::string(1 + below(1 << 16), 'x') + "\": 0, ");
          break;
        default:  // a value replaced by a nasty one
          if (const auto colon = text.find(':', at); colon != std::string::npos)
            text.insert(colon + 1, std::string(" ") + kNasty[below(std::size(kNasty))] + ",");
          break;
      }
    }
    *valid = false;  // the mutated spec may still be valid; only its code is checked
    return text;
  }

  std::string bytes() {
    std::string b(below(64), '\0');
    for (char& c : b) c = static_cast<char>(below(256));
    return b;
  }

 private:
  std::mt19937_64 rng_;
};

bool printable(const std::string& s) {
  for (const char c : s)
    if (c < 0x20 || c > 0x7e) return false;
  return true;
}

// Replies by status code, over all clients (reported at the end: a run that only ever got one
// code tested little).
std::array<std::atomic<int>, 17> g_codes{};

void expect_deliberate(const grpc::Status& s, const std::string& what) {
  const auto code = s.error_code();
  ++g_codes[static_cast<std::size_t>(code)];
  EXPECT_TRUE(code == grpc::StatusCode::OK || code == grpc::StatusCode::INVALID_ARGUMENT ||
              code == grpc::StatusCode::RESOURCE_EXHAUSTED || code == grpc::StatusCode::NOT_FOUND ||
              code == grpc::StatusCode::OUT_OF_RANGE)
      << what << ": " << code << " " << s.error_message();
  EXPECT_TRUE(printable(s.error_message())) << what;
  EXPECT_LT(s.error_message().size(), 2048u) << what;
}

class PropertyTest : public SharedServerTest<PropertyTest> {
 public:
  static std::vector<std::string> server_args() {
    return {"--threads",          "1",  "--max-concurrent-jobs", "2",   "--max-queued-jobs", "8",
            "--memory-budget-mb", "64", "--max-systems",         "5000"};
  }
};

void client_session(ServerProcess& server, std::uint64_t seed, int requests) {
  Fuzz fuzz(seed);
  auto stub = make_stub(server.channel());
  std::vector<std::string> ids;
  for (int r = 0; r < requests; ++r) {
    const std::string what = "seed " + std::to_string(seed) + " request " + std::to_string(r);
    switch (fuzz.below(5)) {
      case 0:
      case 1: {  // a spec through Simulate: a valid one must give the in-process numbers
        bool valid = false;
        const std::string text = fuzz.spec(&valid);
        const StreamResult result = simulate(*stub, json_request(text));
        expect_deliberate(result.status, what);
        if (valid) expect_matches_in_process(result, text);
        if (!result.job_id().empty()) ids.push_back(result.job_id());
        break;
      }
      case 2: {  // SubmitJob, then perhaps a cancel
        bool valid = false;
        grpc::ClientContext context;
        set_deadline(context);
        v1::SubmitJobResponse response;
        const grpc::Status s =
            stub->SubmitJob(&context, json_request(fuzz.spec(&valid)), &response);
        expect_deliberate(s, what);
        const auto& md = context.GetServerTrailingMetadata();
        for (const auto& [key, value] : md)
          EXPECT_TRUE(printable(std::string(value.data(), value.size()))) << what;
        if (s.ok()) {
          ids.push_back(response.job_id());
          if (fuzz.chance(0.5)) {
            v1::CancelJobResponse cancelled;
            expect_deliberate(cancel_job(*stub, response.job_id(), &cancelled), what);
          }
        }
        break;
      }
      case 3:  // random bytes to a random method
        expect_deliberate(
            raw_call(server.channel(), kMethods[fuzz.below(std::size(kMethods))], fuzz.bytes()),
            what);
        break;
      default: {                                    // a known or made-up job id
        std::string id = "j-" + std::to_string(r);  // unknown
        if (!ids.empty() && fuzz.chance(0.5))
          id = ids[fuzz.below(ids.size())];
        else if (fuzz.chance(0.5))
          id += fuzz.bytes();
        v1::GetJobResponse job;
        expect_deliberate(get_job(*stub, id, &job), what);
        const StreamResult stream = stream_results(*stub, id, fuzz.below(4));
        expect_deliberate(stream.status, what);
        break;
      }
    }
  }
}

TEST_F(PropertyTest, RandomRequestsLeaveTheServerHealthyAndCorrect) {
  const char* env = std::getenv("UKES_PROPERTY_SEED");
  const std::uint64_t seed = env != nullptr ? std::strtoull(env, nullptr, 10) : 20261123;
  std::printf("[ property ] seed %llu (UKES_PROPERTY_SEED replays it)\n",
              static_cast<unsigned long long>(seed));
  std::vector<std::thread> clients;
  for (std::uint64_t c = 0; c < 4; ++c)
    clients.emplace_back([&, c] { client_session(*server_, seed + c, 150); });
  for (auto& t : clients) t.join();
  std::printf(
      "[ property ] replies: OK %d, INVALID_ARGUMENT %d, RESOURCE_EXHAUSTED %d, "
      "NOT_FOUND %d, OUT_OF_RANGE %d\n",
      g_codes[0].load(), g_codes[3].load(), g_codes[8].load(), g_codes[5].load(),
      g_codes[11].load());
  EXPECT_GT(g_codes[0].load(), 20);
  EXPECT_GT(g_codes[3].load(), 20);

  EXPECT_TRUE(server_->alive()) << server_->log_text();
  auto health = grpc::health::v1::Health::NewStub(server_->channel());
  grpc::ClientContext context;
  set_deadline(context);
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  ASSERT_TRUE(health->Check(&context, request, &response).ok());
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  std::istringstream log(server_->log_text());
  for (std::string line; std::getline(log, line);)
    EXPECT_TRUE(nlohmann::json::accept(line)) << line.substr(0, 200);
}

}  // namespace
}  // namespace ukes::testing
