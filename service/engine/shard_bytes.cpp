#include "service/engine/shard_bytes.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace ukes {

namespace {

constexpr std::uint64_t kMagic = 0x756b65732d736864;  // "ukes-shd"

class Writer {
 public:
  template <class T>
  void value(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void text(const std::string& s) {
    value<std::uint64_t>(s.size());
    bytes_ += s;
  }
  template <class T>
  void array(const std::vector<T>& v) {
    value<std::uint64_t>(v.size());
    bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  template <class T>
  T value() {
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  std::string text() {
    const auto size = value<std::uint64_t>();
    return {take(size), size};
  }
  // An array that must hold `expected` elements.
  template <class T>
  void array(std::vector<T>& v, std::size_t expected, const char* what) {
    const auto size = value<std::uint64_t>();
    if (size != expected)
      throw std::runtime_error(std::string("packed shard: ") + what + " holds " +
                               std::to_string(size) + " values, expected " +
                               std::to_string(expected));
    v.resize(size);
    std::memcpy(v.data(), take(size * sizeof(T)), size * sizeof(T));
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  const char* take(std::size_t n) {
    if (n > bytes_.size() - at_) throw std::runtime_error("packed shard: truncated");
    const char* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }
  const std::string& bytes_;
  std::size_t at_ = 0;
};

}  // namespace

std::string pack_shard(const RunSpec& spec, const RunOutcome& outcome) {
  Writer w;
  const BatchResults& r = outcome.results;
  w.value(kMagic);
  w.value<std::int64_t>(spec.shard.first);
  w.value<std::int32_t>(r.count);
  w.value(outcome.steps);
  w.value(outcome.elapsed_s);
  w.value(outcome.total_s);
  w.value(outcome.threads);
  w.value(outcome.fallback_from);
  w.text(outcome.backend);
  w.text(outcome.fallback_reason);
  w.text(outcome.gpu_kernel);
  w.text(outcome.gpu_loss);
  for_each_input([&](const FieldInfo&, const auto& v) { w.array(v); }, spec.batch);
  for_each_result([&](const FieldInfo&, const auto& v) { w.array(v); }, r);
  w.array(r.traj_ids);
  for_each_trajectory([&](const FieldInfo&, const auto& v) { w.array(v); }, r);
  return w.take();
}

void unpack_shard(const std::string& bytes, RunSpec& spec, RunOutcome& outcome) {
  Reader in(bytes);
  if (in.value<std::uint64_t>() != kMagic) throw std::runtime_error("packed shard: bad magic");
  if (in.value<std::int64_t>() != spec.shard.first || in.value<std::int32_t>() != spec.batch.count)
    throw std::runtime_error("packed shard: not the systems of this shard");
  outcome.steps = in.value<std::int64_t>();
  outcome.elapsed_s = in.value<double>();
  outcome.total_s = in.value<double>();
  outcome.threads = in.value<int>();
  outcome.fallback_from = in.value<int>();
  outcome.backend = in.text();
  outcome.fallback_reason = in.text();
  outcome.gpu_kernel = in.text();
  outcome.gpu_loss = in.text();

  Batch& batch = spec.batch;
  const auto count = static_cast<std::size_t>(batch.count);
  const RecordShape shape = record_shape(spec);
  for_each_input([&](const FieldInfo& f, auto& v) { in.array(v, count * shape(f.width), f.name); },
                 batch);
  BatchResults& r = outcome.results;
  r.allocate(batch, spec.settings.samples, spec.output.trajectory_ids, spec.settings.events);
  for_each_result([&](const FieldInfo& f, auto& v) { in.array(v, v.size(), f.name); }, r);
  std::vector<std::int32_t> ids;
  in.array(ids, r.traj_ids.size(), "trajectory ids");
  if (ids != r.traj_ids) throw std::runtime_error("packed shard: other recorded systems");
  for_each_trajectory([&](const FieldInfo& f, auto& v) { in.array(v, v.size(), f.name); }, r);
  if (!in.done()) throw std::runtime_error("packed shard: trailing bytes");
  r.backend = outcome.backend;
  r.elapsed_s = outcome.elapsed_s;
  outcome.systems_done = batch.count;
  outcome.end = RunEnd::kCompleted;
}

}  // namespace ukes
