// Minimal .npy (NumPy format 1.0) reading and writing of 2-D little-endian float64 arrays in C
// order: how the ensemble driver and the C++ peer exchange initial conditions and final states
// with the Python side (numpy.load / numpy.save read and write the same files).
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ukes::bench {

struct NpyMatrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<double> data;  // row-major: element (r, c) at [r * cols + c]

  double at(std::int64_t r, std::int64_t c) const { return data[r * cols + c]; }
};

inline void write_npy(const std::string& path, const NpyMatrix& m) {
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (";
  header += std::to_string(m.rows);
  header += ", ";
  header += std::to_string(m.cols);
  header += "), }";
  // Magic (6) + version (2) + length (2) + header, padded with spaces to a multiple of 64 and
  // closed by a newline, as the format asks.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write " + path);
  const char magic[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.write(magic, 8);
  const auto len = static_cast<std::uint16_t>(header.size());
  const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(len_bytes, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(m.data.data()),
            static_cast<std::streamsize>(m.data.size() * sizeof(double)));
  if (!out) throw std::runtime_error("write failed: " + path);
}

// Reads what write_npy (or numpy.save of a 2-D C-order float64 array) wrote; anything else is
// refused with the reason.
inline NpyMatrix read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  char magic[10];
  in.read(magic, 10);
  if (!in || std::memcmp(magic, "\x93NUMPY", 6) != 0 || magic[6] != 1)
    throw std::runtime_error(path + ": not a version 1 .npy file");
  const std::size_t len = static_cast<unsigned char>(magic[8]) |
                          (static_cast<std::size_t>(static_cast<unsigned char>(magic[9])) << 8);
  std::string header(len, '\0');
  in.read(header.data(), static_cast<std::streamsize>(len));
  if (header.find("'descr': '<f8'") == std::string::npos ||
      header.find("'fortran_order': False") == std::string::npos)
    throw std::runtime_error(path + ": expected C-order little-endian float64");
  const std::size_t open = header.find("'shape': (");
  if (open == std::string::npos) throw std::runtime_error(path + ": no shape");
  NpyMatrix m;
  const std::size_t comma = header.find(',', open + 10);
  const std::size_t close = header.find(')', open + 10);
  if (comma == std::string::npos || comma > close)
    throw std::runtime_error(path + ": expected a 2-D array");
  m.rows = std::stoll(header.substr(open + 10, comma - open - 10));
  m.cols = std::stoll(header.substr(comma + 1, close - comma - 1));
  m.data.resize(static_cast<std::size_t>(m.rows * m.cols));
  in.read(reinterpret_cast<char*>(m.data.data()),
          static_cast<std::streamsize>(m.data.size() * sizeof(double)));
  if (!in) throw std::runtime_error(path + ": truncated data");
  return m;
}

}  // namespace ukes::bench
