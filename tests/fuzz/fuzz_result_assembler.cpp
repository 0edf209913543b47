// fuzz_result_assembler: the input is a job's result stream as a client receives it, a sequence of
// ukes.v1.StreamJobResultsResponse chunks, fed one by one to a ResultAssembler with a 64 MiB limit.
//
// Framing: protobuf's own. The input is read as the wire form of a message with
// `repeated StreamJobResultsResponse chunks = 1`: each chunk is the tag byte 0x0a, its length as a
// varint, then its bytes (make_seeds.cpp writes seeds so). Reading stops at the first other tag or
// at a truncated record; a record that does not parse as a chunk is skipped.
//
// Checks: add() throws nothing but std::runtime_error (its documented type); chunks keep coming
// after a refused one (as after a reconnect), and a refused chunk changes neither last_sequence(),
// has_header() nor finished(); an accepted one is the next in sequence; the buffers always match
// the header's spec; memory stays bounded (libFuzzer's -rss_limit_mb and -malloc_limit_mb catch an
// allocation that is not).
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>

#include "service/protocol/result_assembler.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "ukes/v1/ukes.pb.h"

namespace ukes::fuzz {
namespace {

constexpr std::int64_t kMaxResultBytes = std::int64_t{64} << 20;
constexpr std::uint32_t kChunkTag = (1 << 3) | 2;  // field 1, length-delimited
constexpr int kMaxChunks = 256;

void check_state(const ResultAssembler& a) {
  if (!a.has_header()) return;
  const RunSpec& spec = a.spec();
  UKES_FUZZ_CHECK(spec.model != nullptr);
  UKES_FUZZ_CHECK(spec.batch.count == a.header().count());
  const BatchResults& r = a.outcome().results;
  const auto count = static_cast<std::size_t>(r.count);
  UKES_FUZZ_CHECK(r.count == spec.batch.count);
  UKES_FUZZ_CHECK(r.n == spec.model->n);
  UKES_FUZZ_CHECK(r.residual_slots == spec.model->residual_slots());
  UKES_FUZZ_CHECK(r.samples == spec.settings.samples);
  const auto n = static_cast<std::size_t>(r.n);
  const auto slots = static_cast<std::size_t>(r.residual_slots);
  UKES_FUZZ_CHECK(r.status.size() == count && r.t.size() == count);
  UKES_FUZZ_CHECK(r.q.size() == count * n && r.qd.size() == count * n);
  UKES_FUZZ_CHECK(r.residual_max.size() == count * slots);
  UKES_FUZZ_CHECK(r.force_max.size() == count && r.inconsistency_max.size() == count);
  UKES_FUZZ_CHECK(r.steps.size() == count && r.rejected.size() == count);
  UKES_FUZZ_CHECK(r.traj_slot.size() == count);
  UKES_FUZZ_CHECK(r.traj_ids == spec.output.trajectory_ids);
  const std::size_t per = r.traj_ids.size() * static_cast<std::size_t>(r.samples);
  UKES_FUZZ_CHECK(r.traj_q.size() == per * n && r.traj_qd.size() == per * n);
  UKES_FUZZ_CHECK(r.traj_force.size() == per * n && r.traj_residual.size() == per * slots);
  for (std::size_t s = 0; s < r.traj_ids.size(); ++s)
    UKES_FUZZ_CHECK(r.traj_slot[static_cast<std::size_t>(r.traj_ids[s])] ==
                    static_cast<std::int32_t>(s));
}

}  // namespace
}  // namespace ukes::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);  // strings that are not UTF-8: refused, not news
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ukes;
  ResultAssembler a(fuzz::kMaxResultBytes);
  google::protobuf::io::CodedInputStream in(data, static_cast<int>(size));
  std::string bytes;
  v1::StreamJobResultsResponse chunk;
  for (int k = 0; k < fuzz::kMaxChunks; ++k) {
    if (in.ReadTag() != fuzz::kChunkTag) break;
    std::uint32_t length = 0;
    if (!in.ReadVarint32(&length) || !in.ReadString(&bytes, static_cast<int>(length))) break;
    if (!chunk.ParseFromString(bytes)) continue;
    const std::int64_t last = a.last_sequence();
    const bool had_header = a.has_header(), was_finished = a.finished();
    try {
      a.add(chunk);
      UKES_FUZZ_CHECK(!was_finished);
      UKES_FUZZ_CHECK(chunk.sequence() == last + 1);
      UKES_FUZZ_CHECK(a.last_sequence() == chunk.sequence());
      UKES_FUZZ_CHECK(a.has_header());
    } catch (const std::runtime_error& e) {
      UKES_FUZZ_CHECK_MSG(a.last_sequence() == last, e.what());
      UKES_FUZZ_CHECK_MSG(a.has_header() == had_header, e.what());
      UKES_FUZZ_CHECK_MSG(a.finished() == was_finished, e.what());
    } catch (const std::exception& e) {
      UKES_FUZZ_FAIL("ResultAssembler::add threw an exception that is not a std::runtime_error",
                     e.what());
    } catch (...) {
      UKES_FUZZ_FAIL("ResultAssembler::add threw something that is not a std::exception", "");
    }
    fuzz::check_state(a);
  }
  return 0;
}
