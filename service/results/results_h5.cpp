#include "service/results/results_h5.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "service/results/hdf5_file.hpp"
#include "service/results/results_json.hpp"

namespace ukes {

namespace {

using hdf5::Handle;

// Rows per chunk: 2^16 systems (512 KiB of doubles) of one component, so that a reader of a few
// systems decompresses little and every thread has chunks to compress.
constexpr std::size_t kChunkRows = std::size_t{1} << 16;

template <class Value>
hid_t file_type_of() {
  if constexpr (std::is_same_v<Value, double>) return H5T_IEEE_F64LE;
  if constexpr (std::is_same_v<Value, std::int64_t>) return H5T_STD_I64LE;
  return H5T_STD_I32LE;
}

// One per-system field, stored [component][count] as it is in memory, as the dataset [count] or
// [count, width].
template <class Value>
void write_field(hid_t f, const FieldInfo& field, const std::vector<Value>& values, int width,
                 std::size_t count, const hdf5::NameScales& names, const Handle& system) {
  static_assert(std::endian::native == std::endian::little, "chunks are stored as in memory");
  std::vector<hsize_t> dims{count};
  if (field.width != Width::kOne) dims.push_back(static_cast<hsize_t>(width));
  Handle d = hdf5::column_dataset(f, field.name, file_type_of<Value>(), sizeof(Value), dims,
                                  values.data(), kChunkRows);
  hdf5::attr_string(d.get(), "description", field.description);
  if (field.encoding == Encoding::kStatus) hdf5::status_flags(d);
  if (field.width == Width::kOne) {
    hdf5::attach(d, {&system});
  } else {
    hdf5::attach(d, {&system, names.of(field.width)});
  }
}

// The statistics of one quantity per component as [components, 8].
void write_summaries(hid_t group, const char* name, const std::vector<Summary>& summaries,
                     const Handle& statistic, const Handle* components) {
  std::vector<double> values;
  for (const Summary& s : summaries)
    values.insert(values.end(),
                  {static_cast<double>(s.count), s.min, s.max, s.mean, s.std, s.p50, s.p95, s.p99});
  if (components == nullptr) {
    Handle d = hdf5::doubles(group, name, {8}, values.data());
    hdf5::attach(d, {&statistic});
  } else {
    Handle d = hdf5::doubles(group, name, {summaries.size(), 8}, values.data());
    hdf5::attach(d, {components, &statistic});
  }
}

void write_ensemble(hid_t f, const EnsembleStatistics& st, const hdf5::NameScales& names) {
  Handle group = hdf5::create_group(f, "ensemble");
  const hid_t g = group.get();
  hdf5::attr_int64(g, "count", st.count);
  hdf5::attr_int64(g, "ok", st.ok);
  hdf5::attr_int64(g, "failed", st.failed);
  {
    Handle by_status = hdf5::create_group(g, "by_status");
    for (int k = 0; k < kStatusCount; ++k)
      hdf5::attr_int64(by_status.get(), status_name(static_cast<Status>(k)),
                       st.by_status[static_cast<std::size_t>(k)]);
  }
  Handle statistic =
      hdf5::strings(g, "statistic", {"count", "min", "max", "mean", "std", "p50", "p95", "p99"});
  hdf5::make_scale(statistic, "statistic");
  write_summaries(g, "q", st.q, statistic, &names.coordinate);
  write_summaries(g, "qd", st.qd, statistic, &names.coordinate);
  write_summaries(g, "residual_max", st.residual, statistic, &names.residual_row);
#define UKES_SCALAR_H5(name, encoding) write_summaries(g, #name, {st.name}, statistic, nullptr);
  UKES_SUMMARIZED_SCALARS(UKES_SCALAR_H5)
#undef UKES_SCALAR_H5
  statistic.close("close ensemble/statistic");
  group.close("close ensemble");
}

void write_file(const std::string& file_name, const RunSpec& spec, const RunOutcome& out) {
  const BatchResults& r = out.results;
  const Batch& b = spec.batch;
  const auto count = static_cast<std::size_t>(r.count);
  Handle file = hdf5::create_file(file_name);
  const hid_t f = file.get();
  hdf5::run_attributes(f, spec, out);
  hdf5::attr_string(f, "run", results_header_json(spec, out).dump());

  std::vector<std::int64_t> ids(count);
  std::iota(ids.begin(), ids.end(), spec.shard.first);  // a shard's: the whole run's ids
  Handle system =
      hdf5::column_dataset(f, "system", H5T_STD_I64LE, 8, {count}, ids.data(), kChunkRows);
  hdf5::make_scale(system, "system");
  hdf5::NameScales names = hdf5::name_scales(f, *spec.model);

  const RecordShape shape = record_shape(spec);
  const auto write = [&](const FieldInfo& field, const auto& values) {
    if (!field_present(field, shape)) return;
    write_field(f, field, values, shape(field.width), count, names, system);
  };
  for_each_result(write, r);
  for_each_input(write, b);
  write_ensemble(f, out.statistics, names);

  // Close every object before the file, so that errors on flush are seen.
  system.close("close system");
  names.close();
  file.close("write " + file_name);
}

}  // namespace

PendingFile stage_results_h5(const std::string& path, const RunSpec& spec, const RunOutcome& out) {
  return hdf5::stage_file(path, [&](const std::string& temp) { write_file(temp, spec, out); });
}

}  // namespace ukes
