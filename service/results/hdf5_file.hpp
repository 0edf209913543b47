// The HDF5 building blocks of ukes' result files (trajectories_h5.cpp, results_h5.cpp): handles
// closed on destruction, datasets, attributes and dimension scales, and the run's description
// and names that both files carry; every failure a std::runtime_error naming what could not be
// done.
#pragma once

#include <hdf5_hl.h>  // hdf5.h and the dimension-scale API (H5DS)

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "service/engine/engine.hpp"
#include "service/results/atomic_file.hpp"

namespace ukes::hdf5 {

// Calls write(temporary path) with HDF5's error printing silenced and stages the file for `path`
// (commit() makes it appear); an error names `path`, and nothing is left behind.
PendingFile stage_file(const std::string& path,
                       const std::function<void(const std::string&)>& write);

// Silences HDF5's own error printing while we write (we report errors ourselves).
class QuietHdf5 {
 public:
  QuietHdf5();
  ~QuietHdf5();
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
  Handle(hid_t id, Closer closer, const std::string& what);
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = -1; }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle& operator=(Handle&&) = delete;
  ~Handle() {
    if (id_ >= 0) closer_(id_);
  }
  hid_t get() const { return id_; }
  // Closes now, so that an error (a failed flush) is seen.
  void close(const std::string& what);

 private:
  hid_t id_;
  Closer closer_;
};

void check(herr_t e, const std::string& what);

Handle create_file(const std::string& path);
Handle create_group(hid_t loc, const char* name);

// A dataset of `dims` written from `data` (in the memory type, C order).
Handle dataset(hid_t loc, const char* name, hid_t file_type, hid_t mem_type,
               const std::vector<hsize_t>& dims, const void* data);
Handle doubles(hid_t loc, const char* name, const std::vector<hsize_t>& dims, const double* data);
Handle strings(hid_t loc, const char* name, const std::vector<std::string>& values);

// A per-system dataset of dims {rows} or {rows, width} from component-major memory (component k
// of row i at values[k * rows + i], element_size bytes each, already in file_type's
// little-endian representation). Chunks hold chunk_rows rows of one component, so each is
// shuffled and deflated over like values; this machine's threads compress them (zlib, the
// deflate filter's format) and H5Dwrite_chunk stores them: readers decode them like any chunk.
Handle column_dataset(hid_t loc, const char* name, hid_t file_type, std::size_t element_size,
                      const std::vector<hsize_t>& dims, const void* values, std::size_t chunk_rows);

void attr_string(hid_t obj, const char* name, const std::string& value);
void attr_int64(hid_t obj, const char* name, std::int64_t value);
void attr_double(hid_t obj, const char* name, double value);
void attr_int32_array(hid_t obj, const char* name, const std::vector<std::int32_t>& values);

// A dimension scale named `name`, and its attachment to dataset d's dimensions in order.
void make_scale(const Handle& d, const char* name);
void attach(const Handle& d, std::initializer_list<const Handle*> scales);

// Root attributes both result files carry: model (and a user model's id and definition),
// ukes_version, n, position_rows, velocity_rows, count, method, precision, backend, t0, t_end,
// samples.
void run_attributes(hid_t file, const RunSpec& spec, const RunOutcome& out);

// The dimension scales of a model's names: coordinate [n], residual_row [2 mp + mv] (phi[i],
// phid[i], psi[i]), param [P].
struct NameScales {
  Handle coordinate, residual_row, param;
  // The scale of a field's components (null for Width::kOne).
  const Handle* of(Width w) const;
  void close();
};
NameScales name_scales(hid_t file, const ModelInfo& m);

// Status codes as CF flags: flag_values 0..kStatusCount-1 and their names in flag_meanings.
void status_flags(const Handle& d);

}  // namespace ukes::hdf5
