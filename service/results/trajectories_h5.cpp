#include "service/results/trajectories_h5.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "service/results/hdf5_file.hpp"

namespace ukes {

namespace {

using hdf5::Handle;

// The recorded systems' rows of an input field stored [component][count]: [recorded][component].
std::vector<double> recorded_rows(const std::vector<double>& values, std::size_t count, int width,
                                  const std::vector<std::int64_t>& ids) {
  const auto w = static_cast<std::size_t>(width);
  std::vector<double> rows(ids.size() * w);
  for (std::size_t s = 0; s < ids.size(); ++s)
    for (std::size_t k = 0; k < w; ++k)
      rows[s * w + k] = values[k * count + static_cast<std::size_t>(ids[s])];
  return rows;
}

// The trajectory fields the spec asked for, [N_out, K, width] each.
void write_trajectories(hid_t f, const RunSpec& spec, const BatchResults& r,
                        const hdf5::NameScales& names, const Handle& sys, const Handle& t) {
  const OutputSpec& o = spec.output;
  const auto n_out = static_cast<hsize_t>(r.traj_ids.size());
  const auto k = static_cast<hsize_t>(r.samples);
  const RecordShape shape = r.shape();
  for_each_trajectory(
      [&](const FieldInfo& field, const std::vector<double>& values) {
        if (!o.wants(field.name)) return;
        const auto width = static_cast<hsize_t>(shape(field.width));
        Handle d = hdf5::doubles(f, field.name, {n_out, k, width}, values.data());
        hdf5::attr_string(d.get(), "description", field.description);
        hdf5::attach(d, {&sys, &t, names.of(field.width)});
      },
      r);
}

// Per recorded system: its inputs (as specified) and final status.
void write_recorded_inputs(hid_t f, const RunSpec& spec, const BatchResults& r,
                           const hdf5::NameScales& names, const Handle& sys,
                           const std::vector<std::int64_t>& ids) {
  const Batch& b = spec.batch;
  const RecordShape shape = b.shape();
  const auto n_out = static_cast<hsize_t>(ids.size());
  const auto count = static_cast<std::size_t>(b.count);
  for_each_input(
      [&](const FieldInfo& field, const std::vector<double>& values) {
        if (!field_present(field, shape)) return;
        const int width = shape(field.width);
        const std::vector<double> rows = recorded_rows(values, count, width, ids);
        Handle d = hdf5::doubles(f, field.name, {n_out, static_cast<hsize_t>(width)}, rows.data());
        hdf5::attach(d, {&sys, names.of(field.width)});
      },
      b);
  std::vector<std::int32_t> status(ids.size());
  for (std::size_t s = 0; s < ids.size(); ++s)
    status[s] = r.status[static_cast<std::size_t>(ids[s])];
  Handle d = hdf5::dataset(f, "status", H5T_STD_I32LE, H5T_NATIVE_INT32, {n_out}, status.data());
  hdf5::status_flags(d);
  hdf5::attach(d, {&sys});
}

void write_file(const std::string& file_name, const RunSpec& spec, const RunOutcome& out) {
  const BatchResults& r = out.results;
  Handle file = hdf5::create_file(file_name);
  const hid_t f = file.get();
  hdf5::run_attributes(f, spec, out);

  const std::vector<double> times = sample_times(spec.settings);
  Handle t = hdf5::doubles(f, "t", {times.size()}, times.data());
  hdf5::make_scale(t, "t");
  const std::vector<std::int64_t> ids(r.traj_ids.begin(), r.traj_ids.end());  // in the batch
  std::vector<std::int64_t> system_ids = ids;  // in the whole run (a shard's start further on)
  for (std::int64_t& id : system_ids) id += spec.shard.first;
  Handle sys = hdf5::dataset(f, "system_ids", H5T_STD_I64LE, H5T_NATIVE_INT64, {system_ids.size()},
                             system_ids.data());
  hdf5::make_scale(sys, "system_ids");
  hdf5::NameScales names = hdf5::name_scales(f, *spec.model);

  write_trajectories(f, spec, r, names, sys, t);
  write_recorded_inputs(f, spec, r, names, sys, ids);

  // Close every object before the file, so that errors on flush are seen.
  t.close("close t");
  sys.close("close system_ids");
  names.close();
  file.close("write " + file_name);
}

}  // namespace

PendingFile stage_trajectories_h5(const std::string& path, const RunSpec& spec,
                                  const RunOutcome& out) {
  return hdf5::stage_file(path, [&](const std::string& temp) { write_file(temp, spec, out); });
}

}  // namespace ukes
