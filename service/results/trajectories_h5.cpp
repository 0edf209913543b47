#include "service/results/trajectories_h5.hpp"

#include <hdf5_hl.h>  // hdf5.h and the dimension-scale API (H5DS)

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "service/engine/version.hpp"
#include "service/runspec/model_source.hpp"

namespace ukes {

namespace {

// Silences HDF5's own error printing while we write (we report errors ourselves).
class QuietHdf5 {
 public:
  QuietHdf5() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// An HDF5 identifier closed on destruction.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle(hid_t id, Closer closer, const std::string& what) : id_(id), closer_(closer) {
    if (id_ < 0) throw std::runtime_error("HDF5: cannot " + what);
  }
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = -1; }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle& operator=(Handle&&) = delete;
  ~Handle() {
    if (id_ >= 0) closer_(id_);
  }
  hid_t get() const { return id_; }
  void close(const std::string& what) {
    const herr_t e = closer_(id_);
    id_ = -1;
    if (e < 0) throw std::runtime_error("HDF5: cannot " + what);
  }

 private:
  hid_t id_;
  Closer closer_;
};

void check(herr_t e, const std::string& what) {
  if (e < 0) throw std::runtime_error("HDF5: cannot " + what);
}

Handle space(const std::vector<hsize_t>& dims) {
  if (dims.empty()) return Handle(H5Screate(H5S_SCALAR), H5Sclose, "create a dataspace");
  return Handle(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
                "create a dataspace");
}

Handle string_type() {
  Handle t(H5Tcopy(H5T_C_S1), H5Tclose, "create a string type");
  check(H5Tset_size(t.get(), H5T_VARIABLE), "create a string type");
  check(H5Tset_cset(t.get(), H5T_CSET_UTF8), "create a string type");
  return t;
}

std::size_t elements(const std::vector<hsize_t>& dims) {
  std::size_t n = 1;
  for (auto d : dims) n *= static_cast<std::size_t>(d);
  return n;
}

Handle dataset(hid_t loc, const char* name, hid_t file_type, hid_t mem_type,
               const std::vector<hsize_t>& dims, const void* data) {
  Handle s = space(dims);
  Handle d(H5Dcreate2(loc, name, file_type, s.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
           H5Dclose, std::string("create dataset ") + name);
  if (elements(dims) > 0)
    check(H5Dwrite(d.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
          std::string("write dataset ") + name);
  return d;
}

Handle doubles(hid_t loc, const char* name, const std::vector<hsize_t>& dims, const double* data) {
  return dataset(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, dims, data);
}

Handle strings(hid_t loc, const char* name, const std::vector<std::string>& values) {
  std::vector<const char*> p;
  for (const auto& v : values) p.push_back(v.c_str());
  Handle t = string_type();
  return dataset(loc, name, t.get(), t.get(), {values.size()}, p.data());
}

void attr_string(hid_t obj, const char* name, const std::string& value) {
  Handle t = string_type();
  Handle s = space({});
  Handle a(H5Acreate2(obj, name, t.get(), s.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
           std::string("create attribute ") + name);
  const char* p = value.c_str();
  check(H5Awrite(a.get(), t.get(), &p), std::string("write attribute ") + name);
}

void attr_int64(hid_t obj, const char* name, std::int64_t value) {
  Handle s = space({});
  Handle a(H5Acreate2(obj, name, H5T_STD_I64LE, s.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
           std::string("create attribute ") + name);
  check(H5Awrite(a.get(), H5T_NATIVE_INT64, &value), std::string("write attribute ") + name);
}

void attr_double(hid_t obj, const char* name, double value) {
  Handle s = space({});
  Handle a(H5Acreate2(obj, name, H5T_IEEE_F64LE, s.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
           std::string("create attribute ") + name);
  check(H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &value), std::string("write attribute ") + name);
}

void attr_int32_array(hid_t obj, const char* name, const std::vector<std::int32_t>& values) {
  Handle s = space({values.size()});
  Handle a(H5Acreate2(obj, name, H5T_STD_I32LE, s.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
           std::string("create attribute ") + name);
  check(H5Awrite(a.get(), H5T_NATIVE_INT32, values.data()), std::string("write attribute ") + name);
}

void make_scale(const Handle& d, const char* name) {
  check(H5DSset_scale(d.get(), name), std::string("make dimension scale ") + name);
}

void attach(const Handle& d, std::initializer_list<const Handle*> scales) {
  unsigned idx = 0;
  for (const Handle* s : scales) {
    check(H5DSattach_scale(d.get(), s->get(), idx), "attach a dimension scale");
    ++idx;
  }
}

void write_file(const std::string& file_name, const RunSpec& spec, const RunOutcome& out) {
  const ModelInfo& m = *spec.model;
  const BatchResults& r = out.results;
  const Batch& b = spec.batch;
  const auto n_out = static_cast<hsize_t>(r.traj_ids.size());
  const auto k = static_cast<hsize_t>(r.samples);
  const auto n = static_cast<hsize_t>(m.n);
  const auto slots = static_cast<hsize_t>(m.residual_slots());
  const auto np = static_cast<hsize_t>(m.params.size());
  const auto c = static_cast<std::size_t>(b.count);

  Handle file(H5Fcreate(file_name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose,
              "create " + file_name);
  const hid_t f = file.get();

  // Root attributes.
  attr_string(f, "model", m.name);
  if (m.user) {  // the definition in full, as JSON: the file reproduces itself
    attr_string(f, "model_id", model_id(m));
    attr_string(f, "model_definition", model_definition_json(m).dump());
  }
  attr_string(f, "ukes_version", version());
  attr_int64(f, "n", m.n);
  attr_int64(f, "position_rows", m.position_rows);
  attr_int64(f, "velocity_rows", m.velocity_rows);
  attr_int64(f, "count", b.count);
  attr_string(f, "method", method_name(spec.settings.method));
  attr_string(f, "precision", precision_name(spec.settings.precision));
  attr_string(f, "backend", out.backend);
  attr_double(f, "t0", spec.settings.t0);
  attr_double(f, "t_end", spec.settings.t_end);
  attr_int64(f, "samples", r.samples);

  // Dimension scales.
  const std::vector<double> times = sample_times(spec.settings);
  Handle t = doubles(f, "t", {k}, times.data());
  make_scale(t, "t");
  std::vector<std::int64_t> ids(r.traj_ids.begin(), r.traj_ids.end());
  Handle sys = dataset(f, "system_ids", H5T_STD_I64LE, H5T_NATIVE_INT64, {n_out}, ids.data());
  make_scale(sys, "system_ids");
  Handle coord = strings(f, "coordinate", m.coordinates);
  make_scale(coord, "coordinate");
  std::vector<std::string> rows;
  for (int i = 0; i < m.position_rows; ++i) rows.push_back("phi[" + std::to_string(i) + "]");
  for (int i = 0; i < m.position_rows; ++i) rows.push_back("phid[" + std::to_string(i) + "]");
  for (int i = 0; i < m.velocity_rows; ++i) rows.push_back("psi[" + std::to_string(i) + "]");
  Handle row = strings(f, "residual_row", rows);
  make_scale(row, "residual_row");
  std::vector<std::string> pnames;
  for (const auto& p : m.params) pnames.emplace_back(p.name);
  Handle param = strings(f, "param", pnames);
  make_scale(param, "param");

  // Trajectories.
  if (spec.output.q) {
    Handle d = doubles(f, "q", {n_out, k, n}, r.traj_q.data());
    attach(d, {&sys, &t, &coord});
  }
  if (spec.output.qd) {
    Handle d = doubles(f, "qd", {n_out, k, n}, r.traj_qd.data());
    attach(d, {&sys, &t, &coord});
  }
  if (spec.output.residual) {
    Handle d = doubles(f, "residual", {n_out, k, slots}, r.traj_residual.data());
    attr_string(d.get(), "description",
                "signed constraint residuals phi, phid (position rows), psi (velocity rows)");
    attach(d, {&sys, &t, &row});
  }
  if (spec.output.force) {
    Handle d = doubles(f, "force", {n_out, k, n}, r.traj_force.data());
    attr_string(d.get(), "description", "total constraint force Qc");
    attach(d, {&sys, &t, &coord});
  }

  // Per recorded system: parameters, initial conditions, status.
  std::vector<double> pv(static_cast<std::size_t>(n_out * np));
  std::vector<double> q0(static_cast<std::size_t>(n_out * n)), qd0(q0.size());
  std::vector<std::int32_t> status(static_cast<std::size_t>(n_out));
  for (std::size_t s = 0; s < ids.size(); ++s) {
    const auto i = static_cast<std::size_t>(ids[s]);
    for (std::size_t p = 0; p < np; ++p) pv[s * np + p] = b.params[p * c + i];
    for (std::size_t j = 0; j < n; ++j) {
      q0[s * n + j] = b.q0[j * c + i];
      qd0[s * n + j] = b.qd0[j * c + i];
    }
    status[s] = r.status[i];
  }
  {
    Handle d = doubles(f, "params", {n_out, np}, pv.data());
    attach(d, {&sys, &param});
  }
  {
    Handle d = doubles(f, "q0", {n_out, n}, q0.data());
    attach(d, {&sys, &coord});
  }
  {
    Handle d = doubles(f, "qd0", {n_out, n}, qd0.data());
    attach(d, {&sys, &coord});
  }
  {
    Handle d = dataset(f, "status", H5T_STD_I32LE, H5T_NATIVE_INT32, {n_out}, status.data());
    std::vector<std::int32_t> flags;
    std::string meanings;
    for (int v = 0; v < kStatusCount; ++v) {
      flags.push_back(v);
      if (v > 0) meanings += ' ';
      meanings += status_name(static_cast<Status>(v));
    }
    attr_int32_array(d.get(), "flag_values", flags);
    attr_string(d.get(), "flag_meanings", meanings);
    attach(d, {&sys});
  }

  // Close every object before the file, so that errors on flush are seen.
  t.close("close t");
  sys.close("close system_ids");
  coord.close("close coordinate");
  row.close("close residual_row");
  param.close("close param");
  file.close("write " + file_name);
}

}  // namespace

PendingFile stage_trajectories_h5(const std::string& path, const RunSpec& spec,
                                  const RunOutcome& out) {
  QuietHdf5 quiet;
  PendingFile f = create_pending_file(path);
  try {
    write_file(f.temp_path(), spec, out);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  sync_file(f.temp_path());
  return f;
}

}  // namespace ukes
