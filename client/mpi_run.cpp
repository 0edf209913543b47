// `mpirun -n K ukes run SPEC ...` (or `srun`): rank r integrates shard r of K in-process
// (service/engine/shards.hpp), rank 0 gathers the shards' inputs and results
// (service/engine/shard_bytes.hpp), merges them and writes the files and summary one process
// would have written (docs/SCALING.md). Built only where CMake finds MPI (UKES_HAVE_MPI);
// without a launcher the binary runs as a single process and never initializes MPI.
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "client/commands.hpp"
#include "client/summary.hpp"
#include "service/engine/shard_bytes.hpp"
#include "service/engine/shards.hpp"
#include "service/runspec/spec_text.hpp"

#if UKES_HAVE_MPI
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <thread>
#endif

namespace ukes::cli {

bool launched_by_mpi() {
#if UKES_HAVE_MPI
  // Open MPI's mpirun, and PMI / PMIx launchers (Slurm's srun --mpi=pmix, MPICH's hydra).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(name) != nullptr) return true;
#endif
  return false;
}

#if UKES_HAVE_MPI

namespace {

constexpr int kTagSize = 1, kTagBytes = 2;
constexpr std::size_t kPiece = std::size_t{1} << 30;  // MPI counts are ints

struct Mpi {
  int rank = 0, ranks = 1;
  Mpi() {
    MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  }
  ~Mpi() { MPI_Finalize(); }
  Mpi(const Mpi&) = delete;
  Mpi& operator=(const Mpi&) = delete;
};

// The worst exit code of all ranks, on every rank.
int agree(int code) {
  int worst = code;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

void send_bytes(const std::string& bytes, int to) {
  const std::uint64_t size = bytes.size();
  MPI_Send(&size, 1, MPI_UINT64_T, to, kTagSize, MPI_COMM_WORLD);
  for (std::size_t at = 0; at < bytes.size(); at += kPiece)
    MPI_Send(bytes.data() + at, static_cast<int>(std::min(kPiece, bytes.size() - at)), MPI_BYTE, to,
             kTagBytes, MPI_COMM_WORLD);
}

std::string receive_bytes(int from) {
  std::uint64_t size = 0;
  MPI_Recv(&size, 1, MPI_UINT64_T, from, kTagSize, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  std::string bytes(size, '\0');
  for (std::size_t at = 0; at < bytes.size(); at += kPiece)
    MPI_Recv(bytes.data() + at, static_cast<int>(std::min(kPiece, bytes.size() - at)), MPI_BYTE,
             from, kTagBytes, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return bytes;
}

// The whole run's spec, checked once before any rank starts: a shard already is refused, and
// the limits are left to each rank's shard (a sweep too large for one process may be run on
// many). Prints why and returns the exit code.
int check_whole_spec(const std::string& text, const RunOptions& options) {
  const int rc = spec_errors_as_usage([&] {
    const nlohmann::json doc = parse_spec_text(text);
    if (doc.is_object() && doc.contains("shard"))
      throw SpecError("shard", "the spec is a shard already; give the whole run to mpirun");
    ParseOptions parse = local_parse_options(doc);
    parse.build_batch = false;
    parse.limits.max_systems = INT_MAX;
    parse_run_spec(doc, parse);
  });
  return rc != kExitOk ? rc : check_result_files({options.out, options.h5});
}

// The spec text, read and checked on rank 0 (so that one rank reports a bad spec, once) and
// broadcast; kExitOk with `text` on every rank, or the code rank 0 failed with.
int shared_spec_text(const Mpi& mpi, const RunOptions& options, std::string& text) {
  int code = kExitOk;
  if (mpi.rank == 0) {
    code = load_spec_text(options.spec, options.count, text, options.devices);
    if (code == kExitOk) code = check_whole_spec(text, options);
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (code != kExitOk) return code;
  std::uint64_t size = text.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  text.resize(size);
  MPI_Bcast(text.data(), static_cast<int>(size), MPI_BYTE, 0, MPI_COMM_WORLD);
  return kExitOk;
}

// CPU threads of this rank: --threads, else the node's hardware threads shared among its ranks.
int rank_threads(const RunOptions& options) {
  if (options.threads > 0) return options.threads;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int on_node = 1;
  MPI_Comm_size(node, &on_node);
  MPI_Comm_free(&node);
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, hardware / on_node);
}

// One shard's run: its spec and outcome, or the exit code (reason printed, naming the rank).
struct ShardRun {
  RunSpec spec;
  RunOutcome outcome;
};
int run_shard(const Mpi& mpi, const nlohmann::json& shard_doc, int threads, ShardRun& run) {
  try {
    run.spec = parse_run_spec(shard_doc, local_parse_options(shard_doc));
    ExecuteOptions exec;
    exec.threads = threads;
    run.outcome = execute(run.spec, exec);
    return kExitOk;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ukes: rank %d: %s\n", mpi.rank, e.what());
    return kExitFailure;
  }
}

// Rank 0: every rank's shard, its own included, merged; files written and summary printed.
int gather_and_report(const std::vector<SystemRange>& ranges, const nlohmann::json& doc,
                      ShardRun& own, const RunOptions& options) {
  // Every rank's bytes are received before any is looked at: a rank blocked in its send while
  // rank 0 gave up would never reach the final agreement.
  std::vector<std::string> received;
  for (std::size_t r = 1; r < ranges.size(); ++r)
    received.push_back(receive_bytes(static_cast<int>(r)));
  std::vector<ShardRun> others(ranges.size() - 1);
  std::vector<ShardResult> shards{{own.spec, own.outcome}};
  try {
    for (std::size_t r = 1; r < ranges.size(); ++r) {
      ShardRun& s = others[r - 1];
      const nlohmann::json shard_doc = shard_spec(doc, ranges[r]);
      ParseOptions parse = local_parse_options(shard_doc);
      // Whatever the rank ran on (its device_ids were checked there): only the inputs are
      // rebuilt here.
      parse.gpu_available = true;
      parse.gpu_devices = std::numeric_limits<int>::max();
      parse.build_batch = false;
      s.spec = parse_run_spec(shard_doc, parse);
      unpack_shard(received[r - 1], s.spec, s.outcome);
      std::string().swap(received[r - 1]);  // its memory back: it is unpacked
      shards.push_back({s.spec, s.outcome});
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ukes: rank 0: %s\n", e.what());
    return kExitFailure;
  }
  return report_merged(shards, {options.out, options.h5});
}

}  // namespace

int run_as_mpi_rank(const RunOptions& options) {
  const Mpi mpi;
  std::string text;
  if (const int code = shared_spec_text(mpi, options, text); code != kExitOk) return code;
  const nlohmann::json doc = parse_spec_text(text);
  const std::vector<SystemRange> ranges = shard_ranges(spec_system_count(doc), mpi.ranks);
  const bool has_shard = static_cast<std::size_t>(mpi.rank) < ranges.size();
  const int threads = rank_threads(options);  // collective: every rank calls it

  ShardRun own;
  int code = kExitOk;
  if (has_shard) {
    if (mpi.rank == 0)
      std::fprintf(stderr, "ukes: %zu MPI ranks, %d CPU thread%s each\n", ranges.size(), threads,
                   threads == 1 ? "" : "s");
    code =
        run_shard(mpi, shard_spec(doc, ranges[static_cast<std::size_t>(mpi.rank)]), threads, own);
  }
  if (const int worst = agree(code); worst != kExitOk) return worst;
  if (mpi.rank == 0)
    code = gather_and_report(ranges, doc, own, options);
  else if (has_shard)
    send_bytes(pack_shard(own.spec, own.outcome), 0);
  return agree(code);
}

#else

int run_as_mpi_rank(const RunOptions& options) { return run_command(options); }

#endif

}  // namespace ukes::cli
