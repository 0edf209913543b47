// `ukes run SPEC --server A,B,...`: one run split into shards over several servers (or several
// shards on one, --shards), followed side by side and put back together into the files and
// summary one server would have given (service/engine/shards.hpp; docs/SCALING.md).
#include <arpa/inet.h>
#include <netdb.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "client/commands.hpp"
#include "client/job_follower.hpp"
#include "service/engine/shards.hpp"
#include "service/runspec/spec_text.hpp"

namespace ukes::cli {

namespace {

// The progress of a sharded run: the sum of its shards' (the slowest one's time to go).
class ShardProgress {
 public:
  ShardProgress(Console& console, const std::vector<SystemRange>& ranges) : console_(console) {
    for (const SystemRange& r : ranges) {
      v1::Progress p;
      p.set_systems_total(r.count);
      p.set_eta_s(-1);
      shards_.push_back(p);
    }
  }

  void update(std::size_t shard, const v1::Progress& progress) {
    v1::Progress sum;
    {
      const std::lock_guard lock(mutex_);
      shards_[shard] = progress;
      double eta = 0;
      for (const v1::Progress& p : shards_) {
        sum.set_systems_done(sum.systems_done() + p.systems_done());
        sum.set_systems_total(sum.systems_total() + p.systems_total());
        sum.set_steps_done(sum.steps_done() + p.steps_done());
        sum.set_system_steps_per_s(sum.system_steps_per_s() + p.system_steps_per_s());
        sum.set_elapsed_s(std::max(sum.elapsed_s(), p.elapsed_s()));
        const bool done = p.systems_done() >= p.systems_total();
        eta = done ? eta : p.eta_s() < 0 || eta < 0 ? -1 : std::max(eta, p.eta_s());
      }
      sum.set_eta_s(eta);
    }
    console_.show(sum);
  }

 private:
  std::mutex mutex_;
  Console& console_;
  std::vector<v1::Progress> shards_;
};

// Once a shard has failed, the other shards' jobs are cancelled rather than left to run for a
// result that will not be written: those under way at once, the others as their header names them.
class ShardCancel {
 public:
  ShardCancel(const std::vector<std::unique_ptr<v1::UkesService::Stub>>& stubs, std::size_t shards)
      : stubs_(stubs), job_ids_(shards) {}

  // Shard k's job is `job_id` (called on its follower's thread with each progress report).
  void started(std::size_t k, const std::string& job_id) {
    const std::lock_guard lock(mutex_);
    if (!job_ids_[k].empty()) return;
    job_ids_[k] = job_id;
    if (failed_) cancel(k);
  }

  void fail(std::size_t failed_shard) {
    const std::lock_guard lock(mutex_);
    if (failed_) return;
    failed_ = true;
    first_failed_ = failed_shard;
    for (std::size_t k = 0; k < job_ids_.size(); ++k)
      if (k != failed_shard && !job_ids_[k].empty()) cancel(k);
  }

  // The shard that failed first (the others may have failed only because they were cancelled).
  std::optional<std::size_t> first_failed() {
    const std::lock_guard lock(mutex_);
    return failed_ ? std::optional(first_failed_) : std::nullopt;
  }

 private:
  void cancel(std::size_t k) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::CancelJobRequest request;
    request.set_job_id(job_ids_[k]);
    v1::CancelJobResponse response;
    stubs_[k % stubs_.size()]->CancelJob(&context, request, &response);  // best effort
  }

  std::mutex mutex_;
  const std::vector<std::unique_ptr<v1::UkesService::Stub>>& stubs_;
  std::vector<std::string> job_ids_;
  bool failed_ = false;
  std::size_t first_failed_ = 0;
};

StreamOpener simulate_opener(const std::string& spec_json) {
  v1::SimulateRequest request;
  request.mutable_job()->set_spec_json(spec_json);
  return [request](v1::UkesService::Stub& stub, grpc::ClientContext& context) {
    return std::unique_ptr<ResultReader>(stub.Simulate(&context, request));
  };
}

}  // namespace

int report_merged(const std::vector<ShardResult>& shards, const ResultFiles& files) {
  try {
    const MergedRun run = merge_shards(shards);
    write_result_files(files, run.spec, run.outcome);
    print_summary(run.spec, run.outcome, total_steps(run.outcome.results));
    print_written(files, run.outcome);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ukes: %s\n", e.what());
    return kExitFailure;
  }
  return kExitOk;
}

std::vector<std::string> split_servers(const std::string& list) {
  std::vector<std::string> servers;
  std::size_t begin = 0;
  while (begin <= list.size()) {
    const std::size_t comma = std::min(list.find(',', begin), list.size());
    if (comma > begin) servers.push_back(list.substr(begin, comma - begin));
    begin = comma + 1;
  }
  return servers;
}

std::vector<std::string> each_address(const std::vector<std::string>& servers) {
  std::vector<std::string> targets;
  for (const std::string& server : servers) {
    // HOST:PORT, [V6]:PORT, or gRPC's dns:///HOST:PORT.
    std::string name = server.rfind("dns:///", 0) == 0 ? server.substr(7) : server;
    const std::size_t colon = name.rfind(':');
    if (colon == std::string::npos || colon + 1 == name.size())
      throw std::runtime_error("--each-address: '" + server + "' is not HOST:PORT");
    const std::string port = name.substr(colon + 1);
    std::string host = name.substr(0, colon);
    if (host.size() > 1 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (const int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0)
      throw std::runtime_error("--each-address: cannot resolve '" + server +
                               "': " + gai_strerror(rc));
    for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
      char text[INET6_ADDRSTRLEN] = {};
      const bool v6 = a->ai_family == AF_INET6;
      const void* address =
          v6 ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr)
             : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr);
      if (inet_ntop(a->ai_family, address, text, sizeof text) == nullptr) continue;
      const std::string target = v6 ? "ipv6:[" + std::string(text) + "]:" + port
                                    : "ipv4:" + std::string(text) + ":" + port;
      if (std::find(targets.begin(), targets.end(), target) == targets.end())
        targets.push_back(target);
    }
    freeaddrinfo(found);
  }
  return targets;
}

int run_sharded(const std::vector<std::string>& servers, int shards, const std::string& text,
                const ResultFiles& files) {
  nlohmann::json doc;
  if (const int rc = spec_errors_as_usage([&] { doc = parse_spec_text(text); }); rc != kExitOk)
    return rc;
  if (doc.is_object() && doc.contains("shard")) {
    std::fprintf(stderr,
                 "ukes: spec error: shard: the spec is a shard already; give the whole "
                 "run to shard it over servers\n");
    return kExitUsage;
  }
  const std::int64_t count = spec_system_count(doc);
  // A spec whose size cannot be read is the first server's to refuse, with its reasons.
  const std::vector<SystemRange> ranges =
      shard_ranges(std::max<std::int64_t>(count, 1), count > 0 ? shards : 1);

  Console console(isatty(STDERR_FILENO) != 0);
  ShardProgress progress(console, ranges);
  std::vector<std::unique_ptr<v1::UkesService::Stub>> stubs;
  for (const std::string& server : servers)
    stubs.push_back(v1::UkesService::NewStub(make_channel(server)));
  ShardCancel cancel(stubs, ranges.size());
  std::vector<std::unique_ptr<JobFollower>> followers;
  for (std::size_t k = 0; k < ranges.size(); ++k) {
    const std::size_t s = k % servers.size();
    // Progress comes from the header on, on the follower's own thread.
    followers.push_back(std::make_unique<JobFollower>(
        *stubs[s], servers[s], files, console,
        [&progress, &cancel, &followers, k](const v1::Progress& p) {
          cancel.started(k, followers[k]->assembler().header().job_id());
          progress.update(k, p);
        }));
  }
  std::vector<int> codes(ranges.size(), kExitOk);
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < ranges.size(); ++k) {
    const std::string shard = count > 0 ? shard_spec(doc, ranges[k]).dump() : text;
    threads.emplace_back([&codes, &cancel, follower = followers[k].get(), k, shard] {
      codes[k] = follower->run_to_end(simulate_opener(shard));
      if (codes[k] != kExitOk) cancel.fail(k);
    });
  }
  for (std::thread& t : threads) t.join();
  console.clear();
  if (const std::optional<std::size_t> failed = cancel.first_failed()) {
    const std::size_t k = *failed;
    std::fprintf(stderr,
                 "ukes: shard %zu of %zu (systems %lld..%lld on %s) failed; the other shards' "
                 "jobs were cancelled\n",
                 k + 1, ranges.size(), static_cast<long long>(ranges[k].first),
                 static_cast<long long>(ranges[k].end() - 1), followers[k]->server().c_str());
    return codes[k];
  }
  std::vector<ShardResult> done;
  for (const auto& f : followers) done.push_back({f->assembler().spec(), f->assembler().outcome()});
  return report_merged(done, files);
}

}  // namespace ukes::cli
