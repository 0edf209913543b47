// Helpers shared by the `ukes` command-line tests: files in scratch directories, running the built
// `ukes` binary with its output captured, and opening HDF5 result files. Header-only.
#pragma once

#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ukes::cli_test {

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

inline std::string quoted(const std::string& s) { return "'" + s + "'"; }

struct Result {
  int code = -1;
  std::string out, err;
};

// The shell line that runs `ukes ARGS` in `dir` with standard output and error going to TAG.out
// and TAG.err there; `env` ("NAME=VALUE ...") is added to its environment, standard input comes
// from `stdin_file` (default /dev/null). The tests compare with CPU runs bit for bit, so `ukes`
// runs on the CPU wherever it runs (UKES_DISABLE_GPU=1, which `env` may override).
inline std::string ukes_command_line(const std::filesystem::path& dir, const std::string& args,
                                     const std::string& tag, const std::string& env = "",
                                     const std::string& stdin_file = "") {
  return "cd " + quoted(dir.string()) + " && exec env UKES_DISABLE_GPU=1 " + env + " " +
         quoted(std::string(UKES_BINARY_DIR) + "/ukes") + " " + args + " > " +
         quoted((dir / (tag + ".out")).string()) + " 2> " +
         quoted((dir / (tag + ".err")).string()) + " < " +
         quoted(stdin_file.empty() ? "/dev/null" : stdin_file);
}

// Runs `ukes ARGS` in `dir` to its end.
inline Result run_ukes(const std::filesystem::path& dir, const std::string& args,
                       const std::string& env = "", const std::string& stdin_file = "") {
  const int status = std::system(ukes_command_line(dir, args, "ukes", env, stdin_file).c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(dir / "ukes.out");
  r.err = read_file(dir / "ukes.err");
  return r;
}

// An HDF5 file open for reading (id < 0 when it could not be opened).
struct H5File {
  explicit H5File(const std::string& path)
      : id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)) {}
  ~H5File() {
    if (id >= 0) H5Fclose(id);
  }
  H5File(const H5File&) = delete;
  H5File& operator=(const H5File&) = delete;
  hid_t id;
};

// The dataset's values as doubles (integers convert exactly at these sizes); empty when absent.
inline std::vector<double> read_dataset(hid_t file, const char* name) {
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return {};
  const hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  const hid_t s = H5Dget_space(d);
  const auto count = static_cast<std::size_t>(H5Sget_simple_extent_npoints(s));
  std::vector<double> v(count);
  EXPECT_GE(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0) << name;
  H5Sclose(s);
  H5Dclose(d);
  return v;
}

// A variable-length string attribute of an HDF5 object ("<missing>" when there is none).
inline std::string read_string_attr(hid_t obj, const char* name) {
  const hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return "<missing>";
  const hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  char* p = nullptr;
  H5Aread(a, t, &p);
  std::string s = p ? p : "";
  H5free_memory(p);
  H5Tclose(t);
  H5Aclose(a);
  return s;
}

}  // namespace ukes::cli_test
