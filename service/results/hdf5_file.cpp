#include "service/results/hdf5_file.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kernels/ensemble/ensemble.hpp"
#include "service/engine/version.hpp"
#include "service/results/on_threads.hpp"
#include "service/runspec/model_source.hpp"

namespace ukes::hdf5 {

PendingFile stage_file(const std::string& path,
                       const std::function<void(const std::string&)>& write) {
  QuietHdf5 quiet;
  PendingFile f = create_pending_file(path);
  try {
    write(f.temp_path());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  sync_file(f.temp_path());
  return f;
}

QuietHdf5::QuietHdf5() {
  H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietHdf5::~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

Handle::Handle(hid_t id, Closer closer, const std::string& what) : id_(id), closer_(closer) {
  if (id_ < 0) throw std::runtime_error("HDF5: cannot " + what);
}

void Handle::close(const std::string& what) {
  const herr_t e = closer_(id_);
  id_ = -1;
  if (e < 0) throw std::runtime_error("HDF5: cannot " + what);
}

void check(herr_t e, const std::string& what) {
  if (e < 0) throw std::runtime_error("HDF5: cannot " + what);
}

namespace {

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

// HDF5's shuffle filter: byte b of every element, then byte b + 1, ...
void shuffle(const unsigned char* in, std::size_t elements, std::size_t size, unsigned char* out) {
  for (std::size_t b = 0; b < size; ++b)
    for (std::size_t i = 0; i < elements; ++i) out[b * elements + i] = in[i * size + b];
}

// The stored form of one chunk: `bytes` of values (the edge chunk zero-padded to `chunk_bytes`),
// shuffled, then deflated at level 1 (most of the size gain of higher levels at a fraction of
// their time on doubles).
std::vector<unsigned char> encode_chunk(const unsigned char* values, std::size_t bytes,
                                        std::size_t chunk_bytes, std::size_t element_size) {
  std::vector<unsigned char> raw(chunk_bytes, 0), shuffled(chunk_bytes);
  std::memcpy(raw.data(), values, bytes);
  shuffle(raw.data(), chunk_bytes / element_size, element_size, shuffled.data());
  uLongf size = compressBound(static_cast<uLong>(chunk_bytes));
  std::vector<unsigned char> packed(size);
  if (compress2(packed.data(), &size, shuffled.data(), static_cast<uLong>(chunk_bytes), 1) != Z_OK)
    throw std::runtime_error("HDF5: cannot compress a chunk");
  packed.resize(size);
  return packed;
}

}  // namespace

Handle column_dataset(hid_t loc, const char* name, hid_t file_type, std::size_t element_size,
                      const std::vector<hsize_t>& dims, const void* values,
                      std::size_t chunk_rows) {
  const std::size_t rows = dims[0];
  const std::size_t components = dims.size() == 1 ? 1 : dims[1];
  Handle s = space(dims);
  Handle p(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "create dataset properties");
  const bool empty = rows == 0 || components == 0;  // contiguous: a chunk has no zero extent
  chunk_rows = std::clamp<std::size_t>(chunk_rows, 1, std::max<std::size_t>(rows, 1));
  if (!empty) {
    const std::vector<hsize_t> chunk =
        dims.size() == 1 ? std::vector<hsize_t>{chunk_rows} : std::vector<hsize_t>{chunk_rows, 1};
    check(H5Pset_chunk(p.get(), static_cast<int>(chunk.size()), chunk.data()), "set chunks");
    check(H5Pset_shuffle(p.get()), "set the shuffle filter");
    check(H5Pset_deflate(p.get(), 1), "set the deflate filter");
  }
  Handle d(H5Dcreate2(loc, name, file_type, s.get(), H5P_DEFAULT, p.get(), H5P_DEFAULT), H5Dclose,
           std::string("create dataset ") + name);
  if (empty) return d;
  const std::size_t per_column = (rows + chunk_rows - 1) / chunk_rows;
  const std::size_t count = per_column * components;
  std::vector<std::vector<unsigned char>> packed(count);
  const auto* bytes = static_cast<const unsigned char*>(values);
  on_threads(count, [&](std::size_t k) {
    const std::size_t column = k / per_column, first = (k % per_column) * chunk_rows;
    const std::size_t n = std::min(chunk_rows, rows - first);
    packed[k] = encode_chunk(bytes + (column * rows + first) * element_size, n * element_size,
                             chunk_rows * element_size, element_size);
  });
  for (std::size_t k = 0; k < count; ++k) {
    const hsize_t offset[2] = {(k % per_column) * chunk_rows, k / per_column};
    check(H5Dwrite_chunk(d.get(), H5P_DEFAULT, 0, offset, packed[k].size(), packed[k].data()),
          std::string("write dataset ") + name);
    std::vector<unsigned char>().swap(packed[k]);
  }
  return d;
}

Handle create_file(const std::string& path) {
  return Handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose,
                "create " + path);
}

Handle create_group(hid_t loc, const char* name) {
  return Handle(H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                std::string("create group ") + name);
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
    // A dimension without a scale (the event fields' flattened ones) has none attached.
    if (s != nullptr) check(H5DSattach_scale(d.get(), s->get(), idx), "attach a dimension scale");
    ++idx;
  }
}

void status_flags(const Handle& d) {
  std::vector<std::int32_t> flags;
  std::string meanings;
  for (int v = 0; v < kStatusCount; ++v) {
    flags.push_back(v);
    if (v > 0) meanings += ' ';
    meanings += status_name(static_cast<Status>(v));
  }
  attr_int32_array(d.get(), "flag_values", flags);
  attr_string(d.get(), "flag_meanings", meanings);
}

void run_attributes(hid_t f, const RunSpec& spec, const RunOutcome& out) {
  const ModelInfo& m = *spec.model;
  attr_string(f, "model", m.name);
  if (m.user) {  // the definition in full, as JSON: the file reproduces itself
    attr_string(f, "model_id", model_id(m));
    attr_string(f, "model_definition", model_definition_json(m).dump());
  }
  attr_string(f, "ukes_version", version());
  attr_int64(f, "n", m.n);
  attr_int64(f, "position_rows", m.position_rows);
  attr_int64(f, "velocity_rows", m.velocity_rows);
  attr_int64(f, "count", spec.batch.count);
  attr_string(f, "method", method_name(spec.settings.method));
  attr_string(f, "precision", precision_name(spec.settings.precision));
  attr_string(f, "backend", out.backend);
  attr_double(f, "t0", spec.settings.t0);
  attr_double(f, "t_end", spec.settings.t_end);
  attr_int64(f, "samples", spec.settings.samples);
}

const Handle* NameScales::of(Width w) const {
  switch (w) {
    case Width::kOne:
      return nullptr;
    case Width::kCoordinates:
      return &coordinate;
    case Width::kResidualSlots:
      return &residual_row;
    case Width::kParams:
    case Width::kControlParams:
      return &param;
    // [event], [event][record] and [event][record][coordinate], flattened: the "run"
    // attribute's "events" and "event_records" give the sizes.
    case Width::kEvents:
    case Width::kEventRecords:
    case Width::kEventCoordinates:
      return nullptr;
  }
  return nullptr;
}

void NameScales::close() {
  coordinate.close("close coordinate");
  residual_row.close("close residual_row");
  param.close("close param");
}

NameScales name_scales(hid_t f, const ModelInfo& m) {
  std::vector<std::string> rows;
  for (int i = 0; i < m.position_rows; ++i) rows.push_back("phi[" + std::to_string(i) + "]");
  for (int i = 0; i < m.position_rows; ++i) rows.push_back("phid[" + std::to_string(i) + "]");
  for (int i = 0; i < m.velocity_rows; ++i) rows.push_back("psi[" + std::to_string(i) + "]");
  std::vector<std::string> params;
  for (const auto& p : m.params) params.emplace_back(p.name);
  NameScales scales{strings(f, "coordinate", m.coordinates), strings(f, "residual_row", rows),
                    strings(f, "param", params)};
  make_scale(scales.coordinate, "coordinate");
  make_scale(scales.residual_row, "residual_row");
  make_scale(scales.param, "param");
  return scales;
}

}  // namespace ukes::hdf5
