// Stateless per-(seed, i, count, d) sweep sampling: the unit-cube point of system i in dimension d,
// and the inverse CDFs that map it to a distribution. Header-only, no heap, no std containers.
// Sweeps are generated on the host only (a device's erfc/log/exp may differ in the last bit, and
// the inputs integrated must be the inputs reported).
//
// Samplers (namespace ukes::sampling):
//  - random: Philox-4x32-10 (Salmon et al., SC'11; Random123 known-answer vectors in the tests)
//    keyed by the 64-bit seed, counter (i_lo, i_hi, d, stream); 53-bit doubles in (0, 1).
//  - lhs: per dimension a keyed Feistel bijection on [0, 2^(2h)) (2^(2h) >= count, six rounds)
//    restricted to [0, count) by cycle walking gives the stratum pi_d(i); the point is
//    (pi_d(i) + jitter) / count with a Philox jitter in (0, 1). Exactly one point per stratum.
//  - sobol: Sobol' points with the Joe-Kuo direction numbers new-joe-kuo-6.21201 (dimensions 1 to
//    kSobolMaxDims), point i = XOR of the direction numbers over the set bits of gray(i) (the
//    Antonov-Saleev order of Joe-Kuo's and SciPy's generators). Nothing is skipped: system 0 gets
//    point 0. Seed 0 is the unscrambled sequence; any other seed applies a random digital shift
//    (XOR of a Philox word per dimension), which keeps every (t, m, s)-net property. The 32-bit
//    value x maps to (x + 1/2) 2^-32, inside the open interval and inside x's elementary
//    interval. Indices i < 2^32.
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"

namespace ukes {

enum class Sampler { kRandom, kLhs, kSobol };

enum class DistributionKind { kUniform, kNormal, kLognormal, kValues };

namespace sampling {

using std::erf;
using std::erfc;
using std::floor;
using std::log;

// ------------------------------------------------------------------ Philox-4x32-10

struct U32x4 {
  std::uint32_t v[4];
};

UKES_HD inline U32x4 philox4x32_10(U32x4 ctr, std::uint32_t k0, std::uint32_t k1) {
  constexpr std::uint64_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    const std::uint64_t p0 = kM0 * ctr.v[0];
    const std::uint64_t p1 = kM1 * ctr.v[2];
    const U32x4 next = {
        {static_cast<std::uint32_t>(p1 >> 32) ^ ctr.v[1] ^ k0, static_cast<std::uint32_t>(p1),
         static_cast<std::uint32_t>(p0 >> 32) ^ ctr.v[3] ^ k1, static_cast<std::uint32_t>(p0)}};
    ctr = next;
  }
  return ctr;
}

// Streams keep the uses of the generator independent of each other.
inline constexpr std::uint32_t kStreamRandom = 0;
inline constexpr std::uint32_t kStreamLhsJitter = 1;
inline constexpr std::uint32_t kStreamLhsKeys = 2;
inline constexpr std::uint32_t kStreamSobolShift = 3;

// 128 random bits for (seed, counter, d, stream).
UKES_HD inline U32x4 counter_block(std::uint64_t seed, std::uint64_t counter, std::uint32_t d,
                                   std::uint32_t stream) {
  const U32x4 ctr = {
      {static_cast<std::uint32_t>(counter), static_cast<std::uint32_t>(counter >> 32), d, stream}};
  return philox4x32_10(ctr, static_cast<std::uint32_t>(seed),
                       static_cast<std::uint32_t>(seed >> 32));
}

UKES_HD inline std::uint64_t counter_bits64(std::uint64_t seed, std::uint64_t counter,
                                            std::uint32_t d, std::uint32_t stream) {
  const U32x4 r = counter_block(seed, counter, d, stream);
  return (static_cast<std::uint64_t>(r.v[0]) << 32) | r.v[1];
}

// The top 53 bits as k 2^-53, in (0, 1): k = 0 (probability 2^-53) becomes 2^-54.
UKES_HD inline double bits_to_open_unit(std::uint64_t bits) {
  const std::uint64_t k = bits >> 11;
  return k == 0 ? 0x1p-54 : static_cast<double>(k) * 0x1p-53;
}

UKES_HD inline double random_unit(std::uint64_t seed, std::int64_t i, int d) {
  return bits_to_open_unit(counter_bits64(seed, static_cast<std::uint64_t>(i),
                                          static_cast<std::uint32_t>(d), kStreamRandom));
}

// ------------------------------------------------------------------ Latin hypercube

// The murmur3 64-bit finalizer: a bijective avalanche mix.
UKES_HD inline std::uint64_t fmix64(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

inline constexpr int kFeistelRounds = 6;

// pi_d(i): a pseudo-random permutation of [0, count), keyed by (seed, d), evaluated point-wise.
UKES_HD inline std::int64_t lhs_stratum(std::uint64_t seed, std::int64_t i, std::int64_t count,
                                        int d) {
  if (count <= 1) return 0;
  int bits = 0;
  while ((std::int64_t{1} << bits) < count) ++bits;
  const int h = (bits + 1) / 2;  // both halves h bits: the domain 2^(2h) < 4 count
  const std::uint64_t mask = (std::uint64_t{1} << h) - 1;
  std::uint64_t keys[kFeistelRounds];
  for (int r = 0; r < kFeistelRounds; r += 2) {
    const U32x4 b = counter_block(seed, static_cast<std::uint64_t>(r),
                                  static_cast<std::uint32_t>(d), kStreamLhsKeys);
    keys[r] = (static_cast<std::uint64_t>(b.v[0]) << 32) | b.v[1];
    keys[r + 1] = (static_cast<std::uint64_t>(b.v[2]) << 32) | b.v[3];
  }
  std::uint64_t x = static_cast<std::uint64_t>(i);
  do {  // cycle walking: terminates because i lies on its own cycle
    std::uint64_t left = x >> h, right = x & mask;
    for (int r = 0; r < kFeistelRounds; ++r) {
      const std::uint64_t f = fmix64(right ^ keys[r]) & mask;
      const std::uint64_t next = left ^ f;
      left = right;
      right = next;
    }
    x = (left << h) | right;
  } while (x >= static_cast<std::uint64_t>(count));
  return static_cast<std::int64_t>(x);
}

UKES_HD inline double lhs_unit(std::uint64_t seed, std::int64_t i, std::int64_t count, int d) {
  const double jitter = bits_to_open_unit(counter_bits64(
      seed, static_cast<std::uint64_t>(i), static_cast<std::uint32_t>(d), kStreamLhsJitter));
  const double u =
      (static_cast<double>(lhs_stratum(seed, i, count, d)) + jitter) / static_cast<double>(count);
  return u < 1.0 ? u : 1.0 - 0x1p-53;  // rounding may reach 1 in the top stratum
}

// ------------------------------------------------------------------ Sobol'

inline constexpr int kSobolMaxDims = 128;
inline constexpr int kSobolBits = 32;

struct SobolPolynomial {
  int s;           // degree
  unsigned a;      // inner coefficients of the primitive polynomial
  unsigned m[10];  // initial direction integers m_1 .. m_s
};

// new-joe-kuo-6.21201 (S. Joe and F. Y. Kuo, https://web.maths.unsw.edu.au/~fkuo/sobol/),
// Joe-Kuo dimensions 2 to 128 (dimension 1 is van der Corput); our dimension index is the
// Joe-Kuo dimension minus one. Checked against SciPy's _sobol_direction_numbers.npz and public
// transcriptions of the file.
inline constexpr SobolPolynomial kSobolPolynomials[kSobolMaxDims - 1] = {
    {1, 0, {1}},                                          // d = 2
    {2, 1, {1, 3}},                                       // d = 3
    {3, 1, {1, 3, 1}},                                    // d = 4
    {3, 2, {1, 1, 1}},                                    // d = 5
    {4, 1, {1, 1, 3, 3}},                                 // d = 6
    {4, 4, {1, 3, 5, 13}},                                // d = 7
    {5, 2, {1, 1, 5, 5, 17}},                             // d = 8
    {5, 4, {1, 1, 5, 5, 5}},                              // d = 9
    {5, 7, {1, 1, 7, 11, 19}},                            // d = 10
    {5, 11, {1, 1, 5, 1, 1}},                             // d = 11
    {5, 13, {1, 1, 1, 3, 11}},                            // d = 12
    {5, 14, {1, 3, 5, 5, 31}},                            // d = 13
    {6, 1, {1, 3, 3, 9, 7, 49}},                          // d = 14
    {6, 13, {1, 1, 1, 15, 21, 21}},                       // d = 15
    {6, 16, {1, 3, 1, 13, 27, 49}},                       // d = 16
    {6, 19, {1, 1, 1, 15, 7, 5}},                         // d = 17
    {6, 22, {1, 3, 1, 15, 13, 25}},                       // d = 18
    {6, 25, {1, 1, 5, 5, 19, 61}},                        // d = 19
    {7, 1, {1, 3, 7, 11, 23, 15, 103}},                   // d = 20
    {7, 4, {1, 3, 7, 13, 13, 15, 69}},                    // d = 21
    {7, 7, {1, 1, 3, 13, 7, 35, 63}},                     // d = 22
    {7, 8, {1, 3, 5, 9, 1, 25, 53}},                      // d = 23
    {7, 14, {1, 3, 1, 13, 9, 35, 107}},                   // d = 24
    {7, 19, {1, 3, 1, 5, 27, 61, 31}},                    // d = 25
    {7, 21, {1, 1, 5, 11, 19, 41, 61}},                   // d = 26
    {7, 28, {1, 3, 5, 3, 3, 13, 69}},                     // d = 27
    {7, 31, {1, 1, 7, 13, 1, 19, 1}},                     // d = 28
    {7, 32, {1, 3, 7, 5, 13, 19, 59}},                    // d = 29
    {7, 37, {1, 1, 3, 9, 25, 29, 41}},                    // d = 30
    {7, 41, {1, 3, 5, 13, 23, 1, 55}},                    // d = 31
    {7, 42, {1, 3, 7, 3, 13, 59, 17}},                    // d = 32
    {7, 50, {1, 3, 1, 3, 5, 53, 69}},                     // d = 33
    {7, 55, {1, 1, 5, 5, 23, 33, 13}},                    // d = 34
    {7, 56, {1, 1, 7, 7, 1, 61, 123}},                    // d = 35
    {7, 59, {1, 1, 7, 9, 13, 61, 49}},                    // d = 36
    {7, 62, {1, 3, 3, 5, 3, 55, 33}},                     // d = 37
    {8, 14, {1, 3, 1, 15, 31, 13, 49, 245}},              // d = 38
    {8, 21, {1, 3, 5, 15, 31, 59, 63, 97}},               // d = 39
    {8, 22, {1, 3, 1, 11, 11, 11, 77, 249}},              // d = 40
    {8, 38, {1, 3, 1, 11, 27, 43, 71, 9}},                // d = 41
    {8, 47, {1, 1, 7, 15, 21, 11, 81, 45}},               // d = 42
    {8, 49, {1, 3, 7, 3, 25, 31, 65, 79}},                // d = 43
    {8, 50, {1, 3, 1, 1, 19, 11, 3, 205}},                // d = 44
    {8, 52, {1, 1, 5, 9, 19, 21, 29, 157}},               // d = 45
    {8, 56, {1, 3, 7, 11, 1, 33, 89, 185}},               // d = 46
    {8, 67, {1, 3, 3, 3, 15, 9, 79, 71}},                 // d = 47
    {8, 70, {1, 3, 7, 11, 15, 39, 119, 27}},              // d = 48
    {8, 84, {1, 1, 3, 1, 11, 31, 97, 225}},               // d = 49
    {8, 97, {1, 1, 1, 3, 23, 43, 57, 177}},               // d = 50
    {8, 103, {1, 3, 7, 7, 17, 17, 37, 71}},               // d = 51
    {8, 115, {1, 3, 1, 5, 27, 63, 123, 213}},             // d = 52
    {8, 122, {1, 1, 3, 5, 11, 43, 53, 133}},              // d = 53
    {9, 8, {1, 3, 5, 5, 29, 17, 47, 173, 479}},           // d = 54
    {9, 13, {1, 3, 3, 11, 3, 1, 109, 9, 69}},             // d = 55
    {9, 16, {1, 1, 1, 5, 17, 39, 23, 5, 343}},            // d = 56
    {9, 22, {1, 3, 1, 5, 25, 15, 31, 103, 499}},          // d = 57
    {9, 25, {1, 1, 1, 11, 11, 17, 63, 105, 183}},         // d = 58
    {9, 44, {1, 1, 5, 11, 9, 29, 97, 231, 363}},          // d = 59
    {9, 47, {1, 1, 5, 15, 19, 45, 41, 7, 383}},           // d = 60
    {9, 52, {1, 3, 7, 7, 31, 19, 83, 137, 221}},          // d = 61
    {9, 55, {1, 1, 1, 3, 23, 15, 111, 223, 83}},          // d = 62
    {9, 59, {1, 1, 5, 13, 31, 15, 55, 25, 161}},          // d = 63
    {9, 62, {1, 1, 3, 13, 25, 47, 39, 87, 257}},          // d = 64
    {9, 67, {1, 1, 1, 11, 21, 53, 125, 249, 293}},        // d = 65
    {9, 74, {1, 1, 7, 11, 11, 7, 57, 79, 323}},           // d = 66
    {9, 81, {1, 1, 5, 5, 17, 13, 81, 3, 131}},            // d = 67
    {9, 82, {1, 1, 7, 13, 23, 7, 65, 251, 475}},          // d = 68
    {9, 87, {1, 3, 5, 1, 9, 43, 3, 149, 11}},             // d = 69
    {9, 91, {1, 1, 3, 13, 31, 13, 13, 255, 487}},         // d = 70
    {9, 94, {1, 3, 3, 1, 5, 63, 89, 91, 127}},            // d = 71
    {9, 103, {1, 1, 3, 3, 1, 19, 123, 127, 237}},         // d = 72
    {9, 104, {1, 1, 5, 7, 23, 31, 37, 243, 289}},         // d = 73
    {9, 109, {1, 1, 5, 11, 17, 53, 117, 183, 491}},       // d = 74
    {9, 122, {1, 1, 1, 5, 1, 13, 13, 209, 345}},          // d = 75
    {9, 124, {1, 1, 3, 15, 1, 57, 115, 7, 33}},           // d = 76
    {9, 137, {1, 3, 1, 11, 7, 43, 81, 207, 175}},         // d = 77
    {9, 138, {1, 3, 1, 1, 15, 27, 63, 255, 49}},          // d = 78
    {9, 143, {1, 3, 5, 3, 27, 61, 105, 171, 305}},        // d = 79
    {9, 145, {1, 1, 5, 3, 1, 3, 57, 249, 149}},           // d = 80
    {9, 152, {1, 1, 3, 5, 5, 57, 15, 13, 159}},           // d = 81
    {9, 157, {1, 1, 1, 11, 7, 11, 105, 141, 225}},        // d = 82
    {9, 167, {1, 3, 3, 5, 27, 59, 121, 101, 271}},        // d = 83
    {9, 173, {1, 3, 5, 9, 11, 49, 51, 59, 115}},          // d = 84
    {9, 176, {1, 1, 7, 1, 23, 45, 125, 71, 419}},         // d = 85
    {9, 181, {1, 1, 3, 5, 23, 5, 105, 109, 75}},          // d = 86
    {9, 182, {1, 1, 7, 15, 7, 11, 67, 121, 453}},         // d = 87
    {9, 185, {1, 3, 7, 3, 9, 13, 31, 27, 449}},           // d = 88
    {9, 191, {1, 3, 1, 15, 19, 39, 39, 89, 15}},          // d = 89
    {9, 194, {1, 1, 1, 1, 1, 33, 73, 145, 379}},          // d = 90
    {9, 199, {1, 3, 1, 15, 15, 43, 29, 13, 483}},         // d = 91
    {9, 218, {1, 1, 7, 3, 19, 27, 85, 131, 431}},         // d = 92
    {9, 220, {1, 3, 3, 3, 5, 35, 23, 195, 349}},          // d = 93
    {9, 227, {1, 3, 3, 7, 9, 27, 39, 59, 297}},           // d = 94
    {9, 229, {1, 1, 3, 9, 11, 17, 13, 241, 157}},         // d = 95
    {9, 230, {1, 3, 7, 15, 25, 57, 33, 189, 213}},        // d = 96
    {9, 234, {1, 1, 7, 1, 9, 55, 73, 83, 217}},           // d = 97
    {9, 236, {1, 3, 3, 13, 19, 27, 23, 113, 249}},        // d = 98
    {9, 241, {1, 3, 5, 3, 23, 43, 3, 253, 479}},          // d = 99
    {9, 244, {1, 1, 5, 5, 11, 5, 45, 117, 217}},          // d = 100
    {9, 253, {1, 3, 3, 7, 29, 37, 33, 123, 147}},         // d = 101
    {10, 4, {1, 3, 1, 15, 5, 5, 37, 227, 223, 459}},      // d = 102
    {10, 13, {1, 1, 7, 5, 5, 39, 63, 255, 135, 487}},     // d = 103
    {10, 19, {1, 3, 1, 7, 9, 7, 87, 249, 217, 599}},      // d = 104
    {10, 22, {1, 1, 3, 13, 9, 47, 7, 225, 363, 247}},     // d = 105
    {10, 50, {1, 3, 7, 13, 19, 13, 9, 67, 9, 737}},       // d = 106
    {10, 55, {1, 3, 5, 5, 19, 59, 7, 41, 319, 677}},      // d = 107
    {10, 64, {1, 1, 5, 3, 31, 63, 15, 43, 207, 789}},     // d = 108
    {10, 69, {1, 1, 7, 9, 13, 39, 3, 47, 497, 169}},      // d = 109
    {10, 98, {1, 3, 1, 7, 21, 17, 97, 19, 415, 905}},     // d = 110
    {10, 107, {1, 3, 7, 1, 3, 31, 71, 111, 165, 127}},    // d = 111
    {10, 115, {1, 1, 5, 11, 1, 61, 83, 119, 203, 847}},   // d = 112
    {10, 121, {1, 3, 3, 13, 9, 61, 19, 97, 47, 35}},      // d = 113
    {10, 127, {1, 1, 7, 7, 15, 29, 63, 95, 417, 469}},    // d = 114
    {10, 134, {1, 3, 1, 9, 25, 9, 71, 57, 213, 385}},     // d = 115
    {10, 140, {1, 3, 5, 13, 31, 47, 101, 57, 39, 341}},   // d = 116
    {10, 145, {1, 1, 3, 3, 31, 57, 125, 173, 365, 551}},  // d = 117
    {10, 152, {1, 3, 7, 1, 13, 57, 67, 157, 451, 707}},   // d = 118
    {10, 158, {1, 1, 1, 7, 21, 13, 105, 89, 429, 965}},   // d = 119
    {10, 161, {1, 1, 5, 9, 17, 51, 45, 119, 157, 141}},   // d = 120
    {10, 171, {1, 3, 7, 7, 13, 45, 91, 9, 129, 741}},     // d = 121
    {10, 181, {1, 3, 7, 1, 23, 57, 67, 141, 151, 571}},   // d = 122
    {10, 194, {1, 1, 3, 11, 17, 47, 93, 107, 375, 157}},  // d = 123
    {10, 199, {1, 3, 3, 5, 11, 21, 43, 51, 169, 915}},    // d = 124
    {10, 203, {1, 1, 5, 3, 15, 55, 101, 67, 455, 625}},   // d = 125
    {10, 208, {1, 3, 5, 9, 1, 23, 29, 47, 345, 595}},     // d = 126
    {10, 227, {1, 3, 7, 7, 5, 49, 29, 155, 323, 589}},    // d = 127
    {10, 242, {1, 3, 3, 7, 5, 41, 127, 61, 261, 717}},    // d = 128
};

struct SobolDirections {
  std::uint32_t v[kSobolMaxDims][kSobolBits];  // v[d][j]: direction number of bit j, 2^-32 units
};

// v_j = m_j 2^(31 - j) for j < s; then the Bratley-Fox recurrence
// v_j = v_{j-s} ^ (v_{j-s} >> s) ^ XOR_k a_k v_{j-k}.
constexpr SobolDirections make_sobol_directions() {
  SobolDirections t{};
  for (int j = 0; j < kSobolBits; ++j) t.v[0][j] = std::uint32_t{1} << (31 - j);
  for (int d = 1; d < kSobolMaxDims; ++d) {
    const SobolPolynomial& p = kSobolPolynomials[d - 1];
    for (int j = 0; j < kSobolBits; ++j) {
      if (j < p.s) {
        t.v[d][j] = p.m[j] << (31 - j);
        continue;
      }
      std::uint32_t x = t.v[d][j - p.s] ^ (t.v[d][j - p.s] >> p.s);
      for (int k = 1; k < p.s; ++k)
        if ((p.a >> (p.s - 1 - k)) & 1u) x ^= t.v[d][j - k];
      t.v[d][j] = x;
    }
  }
  return t;
}

inline constexpr SobolDirections kSobolDirectionsHost = make_sobol_directions();
#if defined(__CUDACC__)
static __constant__ SobolDirections kSobolDirectionsDevice = make_sobol_directions();
#endif

UKES_HD inline std::uint32_t sobol_direction(int d, int j) {
#if defined(__CUDA_ARCH__)
  return kSobolDirectionsDevice.v[d][j];
#else
  return kSobolDirectionsHost.v[d][j];
#endif
}

// The unscrambled 32-bit Sobol' value of point i in dimension d (0 <= d < kSobolMaxDims).
UKES_HD inline std::uint32_t sobol_bits(std::uint32_t i, int d) {
  std::uint32_t g = i ^ (i >> 1);
  std::uint32_t x = 0;
  for (int j = 0; g != 0; ++j, g >>= 1)
    if (g & 1u) x ^= sobol_direction(d, j);
  return x;
}

UKES_HD inline std::uint32_t sobol_shift(std::uint64_t seed, int d) {
  return seed == 0 ? 0u
                   : counter_block(seed, 0, static_cast<std::uint32_t>(d), kStreamSobolShift).v[0];
}

UKES_HD inline double sobol_unit(std::uint64_t seed, std::int64_t i, int d) {
  const std::uint32_t x = sobol_bits(static_cast<std::uint32_t>(i), d) ^ sobol_shift(seed, d);
  return (static_cast<double>(x) + 0.5) * 0x1p-32;
}

// ------------------------------------------------------------------ the unit-cube point

// System i (0 <= i < count) in dimension d; for sobol d < kSobolMaxDims and i < 2^32 (the host
// glue checks both).
UKES_HD inline double unit_sample(Sampler sampler, std::uint64_t seed, std::int64_t i,
                                  std::int64_t count, int d) {
  switch (sampler) {
    case Sampler::kLhs:
      return lhs_unit(seed, i, count, d);
    case Sampler::kSobol:
      return sobol_unit(seed, i, d);
    case Sampler::kRandom:
      break;
  }
  return random_unit(seed, i, d);
}

// ------------------------------------------------------------------ inverse CDFs

// Phi^-1(p) for p in (0, 1): P. J. Acklam's rational approximation (relative error 1.15e-9)
// refined by one Halley step on Phi(x) - p with Phi from erfc, on the lower tail q = min(p, 1 - p)
// (1 - p is exact for p >= 1/2), so the result is accurate to a few ulp. 0 and 1 give -inf, +inf.
UKES_HD inline double inverse_normal_cdf(double p) {
  if (p == 0.0) return -HUGE_VAL;
  if (p == 1.0) return HUGE_VAL;
  if (!(p > 0.0 && p < 1.0)) return NAN;
  const bool upper = p > 0.5;
  const double q = upper ? 1.0 - p : p;  // in (0, 1/2]
  constexpr double a[6] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                           1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  constexpr double b[5] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                           6.680131188771972e+01, -1.328068155288572e+01};
  constexpr double c[6] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                           -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  constexpr double e[4] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                           3.754408661907416e+00};
  double x;
  if (q < 0.02425) {
    const double r = sqrt(-2.0 * log(q));
    x = (((((c[0] * r + c[1]) * r + c[2]) * r + c[3]) * r + c[4]) * r + c[5]) /
        ((((e[0] * r + e[1]) * r + e[2]) * r + e[3]) * r + 1.0);
  } else {
    const double s = q - 0.5;
    const double r = s * s;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * s /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  }
  // Halley: x <- x - u / (1 + x u / 2), u = (Phi(x) - q) / phi(x); here x <= 0.
  constexpr double kSqrt2Pi = 2.50662827463100050242;
  constexpr double kInvSqrt2 = 0.70710678118654752440;
  // Near the centre Phi(x) - q = erf(x / sqrt 2) / 2 - (q - 1/2) keeps the residual's relative
  // accuracy (q - 1/2 is exact for q >= 1/4); in the tail erfc does.
  const double err =
      q > 0.25 ? 0.5 * erf(x * kInvSqrt2) - (q - 0.5) : 0.5 * erfc(-x * kInvSqrt2) - q;
  const double u = err * kSqrt2Pi * exp(0.5 * x * x);
  x = x - u / (1.0 + 0.5 * x * u);
  return upper ? -x : x;
}

// The value of a distribution at u in (0, 1): uniform lo + (hi - lo) u; normal mean + sd z;
// lognormal exp(mu + sigma z); values values[floor(u n)] (clamped to n - 1).
UKES_HD inline double distribution_at(DistributionKind kind, double a, double b,
                                      const double* values, std::int64_t n_values, double u) {
  switch (kind) {
    case DistributionKind::kUniform:
      return a + (b - a) * u;
    case DistributionKind::kNormal:
      return a + b * inverse_normal_cdf(u);
    case DistributionKind::kLognormal:
      return exp(a + b * inverse_normal_cdf(u));
    case DistributionKind::kValues: {
      std::int64_t k = static_cast<std::int64_t>(floor(u * static_cast<double>(n_values)));
      if (k < 0) k = 0;
      if (k > n_values - 1) k = n_values - 1;
      return values[k];
    }
  }
  return a;
}

}  // namespace sampling
}  // namespace ukes
