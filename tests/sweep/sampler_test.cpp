// The per-(seed, i, count, d) sampling math of kernels/sweep/sampler.hpp against published data:
// Random123's Philox known-answer vectors, Joe and Kuo's direction numbers and first Sobol'
// points, closed-form properties of Latin hypercubes and nets, and Phi(Phi^-1(u)) = u.
#include "kernels/sweep/sampler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace ukes::sampling {
namespace {

// ------------------------------------------------------------------ Philox-4x32-10

// Random123 tests/kat_vectors, the three "philox4x32 10" lines: counter, key, expected output.
TEST(Philox, KnownAnswerVectors) {
  struct Kat {
    U32x4 ctr;
    std::uint32_t k0, k1;
    U32x4 want;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
       0xffffffff,
       0xffffffff,
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
       0xa4093822,
       0x299f31d0,
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (const Kat& k : kats) {
    const U32x4 got = philox4x32_10(k.ctr, k.k0, k.k1);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(got.v[w], k.want.v[w]) << "word " << w;
  }
}

TEST(RandomSampler, OpenUnitIntervalAtTheExtremes) {
  EXPECT_EQ(bits_to_open_unit(0), std::ldexp(1.0, -54));
  EXPECT_EQ(bits_to_open_unit(~std::uint64_t{0}), 1.0 - std::ldexp(1.0, -53));
  EXPECT_EQ(bits_to_open_unit(std::uint64_t{1} << 63), 0.5);
  EXPECT_EQ(bits_to_open_unit(std::uint64_t{1} << 11), std::ldexp(1.0, -53));  // 53-bit grid
}

TEST(RandomSampler, MomentsAndUniformityOf1e5Draws) {
  const int n = 100000;
  for (int d = 0; d < 3; ++d) {
    double sum = 0, sum2 = 0;
    std::vector<int> bins(100, 0);
    for (int i = 0; i < n; ++i) {
      const double u = random_unit(7, i, d);
      ASSERT_GT(u, 0.0);
      ASSERT_LT(u, 1.0);
      sum += u;
      sum2 += (u - 0.5) * (u - 0.5);
      ++bins[static_cast<int>(u * 100)];
    }
    const double mean = sum / n, var = sum2 / n;
    // U(0, 1): mean 1/2 (sd 1/sqrt(12 n)); E(U - 1/2)^2 = 1/12 with sd sqrt((1/80 - 1/144) / n).
    EXPECT_NEAR(mean, 0.5, 4.0 * std::sqrt(1.0 / 12.0 / n));
    EXPECT_NEAR(var, 1.0 / 12.0, 4.0 * std::sqrt((1.0 / 80.0 - 1.0 / 144.0) / n));
    // Pearson chi^2 over 100 equal bins: 99 degrees of freedom, mean 99, sd sqrt(198).
    double chi2 = 0;
    for (int c : bins) chi2 += (c - n / 100.0) * (c - n / 100.0) / (n / 100.0);
    EXPECT_LT(chi2, 99.0 + 5.0 * std::sqrt(198.0)) << "dimension " << d;
  }
}

TEST(RandomSampler, NeighbouringSystemsAndDimensionsAreUncorrelated) {
  const int n = 100000;
  double s_next = 0, s_dim = 0;
  for (int i = 0; i < n; ++i) {
    const double u = random_unit(3, i, 0) - 0.5;
    s_next += u * (random_unit(3, i + 1, 0) - 0.5);
    s_dim += u * (random_unit(3, i, 1) - 0.5);
  }
  // Correlation coefficient of independent uniforms: sd 1/sqrt(n).
  EXPECT_LT(std::abs(s_next / n * 12.0), 5.0 / std::sqrt(n));
  EXPECT_LT(std::abs(s_dim / n * 12.0), 5.0 / std::sqrt(n));
}

TEST(RandomSampler, EveryBitOfTheSeedMatters) {
  int same_low = 0, same_high = 0;
  for (int i = 0; i < 1000; ++i) {
    const double u = random_unit(1, i, 0);
    same_low += u == random_unit(2, i, 0);
    same_high += u == random_unit(1 + (std::uint64_t{1} << 40), i, 0);
  }
  EXPECT_EQ(same_low, 0);
  EXPECT_EQ(same_high, 0);
}

// ------------------------------------------------------------------ Latin hypercube

TEST(LhsSampler, StratumMapIsAPermutationForManyCounts) {
  std::vector<std::int64_t> counts;
  for (std::int64_t c = 1; c <= 130; ++c) counts.push_back(c);
  for (std::int64_t c : {255, 256, 257, 1000, 1023, 1024, 1025, 4097, 100000}) counts.push_back(c);
  for (std::int64_t count : counts) {
    for (std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{12345}}) {
      for (int d : {0, 5}) {
        std::vector<char> seen(static_cast<std::size_t>(count), 0);
        for (std::int64_t i = 0; i < count; ++i) {
          const std::int64_t s = lhs_stratum(seed, i, count, d);
          ASSERT_GE(s, 0);
          ASSERT_LT(s, count);
          ASSERT_EQ(seen[static_cast<std::size_t>(s)], 0) << "count " << count << " i " << i;
          seen[static_cast<std::size_t>(s)] = 1;
        }
      }
    }
  }
}

TEST(LhsSampler, OnePointPerStratumPerDimensionAndPermutationsDiffer) {
  const std::int64_t count = 1000;
  std::vector<std::vector<std::int64_t>> strata;
  for (int d = 0; d < 4; ++d) {
    std::vector<std::int64_t> s(count);
    std::vector<int> used(count, 0);
    double sum = 0;
    for (std::int64_t i = 0; i < count; ++i) {
      const double u = lhs_unit(99, i, count, d);
      ASSERT_GT(u, 0.0);
      ASSERT_LT(u, 1.0);
      s[i] = static_cast<std::int64_t>(std::floor(u * count));
      ++used[s[i]];
      sum += u;
    }
    for (std::int64_t k = 0; k < count; ++k) ASSERT_EQ(used[k], 1) << "stratum " << k;
    // Sum of (pi + jitter) / count over a permutation: mean = 1/2 + (mean jitter - 1/2) / count.
    EXPECT_LT(std::abs(sum / count - 0.5), 0.5 / count);
    strata.push_back(s);
  }
  std::vector<std::int64_t> identity(count);
  std::iota(identity.begin(), identity.end(), 0);
  for (int d = 0; d < 4; ++d) {
    EXPECT_NE(strata[d], identity);
    for (int e = 0; e < d; ++e) EXPECT_NE(strata[d], strata[e]);
  }
  // Strata of two dimensions are (nearly) uncorrelated: rank correlation sd ~ 1/sqrt(count).
  double c = 0;
  for (std::int64_t i = 0; i < count; ++i)
    c += (static_cast<double>(strata[0][i]) - (count - 1) / 2.0) *
         (static_cast<double>(strata[1][i]) - (count - 1) / 2.0);
  const double var = (static_cast<double>(count) * count - 1) / 12.0;
  EXPECT_LT(std::abs(c / count / var), 5.0 / std::sqrt(static_cast<double>(count)));
}

TEST(LhsSampler, SeedChangesTheDesign) {
  const std::int64_t count = 64;
  int same = 0;
  for (std::int64_t i = 0; i < count; ++i)
    same += lhs_stratum(1, i, count, 0) == lhs_stratum(2, i, count, 0);
  EXPECT_LT(same, 10);  // a random pair of permutations of 64 shares ~1 fixed point
}

TEST(LhsSampler, SingleSystemAndTopStratumStayInsideTheOpenInterval) {
  for (std::int64_t i = 0; i < 1; ++i) {
    const double u = lhs_unit(5, i, 1, 0);
    EXPECT_GT(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
  const std::int64_t count = 3;
  for (std::uint64_t seed = 0; seed < 200; ++seed)
    for (std::int64_t i = 0; i < count; ++i) {
      const double u = lhs_unit(seed, i, count, 0);
      ASSERT_GT(u, 0.0);
      ASSERT_LT(u, 1.0);
    }
}

// ------------------------------------------------------------------ Sobol'

// new-joe-kuo-6.21201, dimensions 2 to 128, "s a m_1 ... m_s" rows as published by Joe and Kuo
// (https://web.maths.unsw.edu.au/~fkuo/sobol/), kept here as text, independently of the
// header's table.
const char* const kJoeKuo =
    "1 0 1|2 1 1 3|3 1 1 3 1|3 2 1 1 1|4 1 1 1 3 3|4 4 1 3 5 13|5 2 1 1 5 5 17|5 4 1 1 5 5 5|"
    "5 7 1 1 7 11 19|5 11 1 1 5 1 1|5 13 1 1 1 3 11|5 14 1 3 5 5 31|6 1 1 3 3 9 7 49|"
    "6 13 1 1 1 15 21 21|6 16 1 3 1 13 27 49|6 19 1 1 1 15 7 5|6 22 1 3 1 15 13 25|"
    "6 25 1 1 5 5 19 61|7 1 1 3 7 11 23 15 103|7 4 1 3 7 13 13 15 69|7 7 1 1 3 13 7 35 63|"
    "7 8 1 3 5 9 1 25 53|7 14 1 3 1 13 9 35 107|7 19 1 3 1 5 27 61 31|7 21 1 1 5 11 19 41 61|"
    "7 28 1 3 5 3 3 13 69|7 31 1 1 7 13 1 19 1|7 32 1 3 7 5 13 19 59|7 37 1 1 3 9 25 29 41|"
    "7 41 1 3 5 13 23 1 55|7 42 1 3 7 3 13 59 17|7 50 1 3 1 3 5 53 69|7 55 1 1 5 5 23 33 13|"
    "7 56 1 1 7 7 1 61 123|7 59 1 1 7 9 13 61 49|7 62 1 3 3 5 3 55 33|"
    "8 14 1 3 1 15 31 13 49 245|8 21 1 3 5 15 31 59 63 97|8 22 1 3 1 11 11 11 77 249|"
    "8 38 1 3 1 11 27 43 71 9|8 47 1 1 7 15 21 11 81 45|8 49 1 3 7 3 25 31 65 79|"
    "8 50 1 3 1 1 19 11 3 205|8 52 1 1 5 9 19 21 29 157|8 56 1 3 7 11 1 33 89 185|"
    "8 67 1 3 3 3 15 9 79 71|8 70 1 3 7 11 15 39 119 27|8 84 1 1 3 1 11 31 97 225|"
    "8 97 1 1 1 3 23 43 57 177|8 103 1 3 7 7 17 17 37 71|8 115 1 3 1 5 27 63 123 213|"
    "8 122 1 1 3 5 11 43 53 133|9 8 1 3 5 5 29 17 47 173 479|9 13 1 3 3 11 3 1 109 9 69|"
    "9 16 1 1 1 5 17 39 23 5 343|9 22 1 3 1 5 25 15 31 103 499|9 25 1 1 1 11 11 17 63 105 183|"
    "9 44 1 1 5 11 9 29 97 231 363|9 47 1 1 5 15 19 45 41 7 383|9 52 1 3 7 7 31 19 83 137 221|"
    "9 55 1 1 1 3 23 15 111 223 83|9 59 1 1 5 13 31 15 55 25 161|9 62 1 1 3 13 25 47 39 87 257|"
    "9 67 1 1 1 11 21 53 125 249 293|9 74 1 1 7 11 11 7 57 79 323|9 81 1 1 5 5 17 13 81 3 131|"
    "9 82 1 1 7 13 23 7 65 251 475|9 87 1 3 5 1 9 43 3 149 11|9 91 1 1 3 13 31 13 13 255 487|"
    "9 94 1 3 3 1 5 63 89 91 127|9 103 1 1 3 3 1 19 123 127 237|9 104 1 1 5 7 23 31 37 243 289|"
    "9 109 1 1 5 11 17 53 117 183 491|9 122 1 1 1 5 1 13 13 209 345|"
    "9 124 1 1 3 15 1 57 115 7 33|9 137 1 3 1 11 7 43 81 207 175|9 138 1 3 1 1 15 27 63 255 49|"
    "9 143 1 3 5 3 27 61 105 171 305|9 145 1 1 5 3 1 3 57 249 149|9 152 1 1 3 5 5 57 15 13 159|"
    "9 157 1 1 1 11 7 11 105 141 225|9 167 1 3 3 5 27 59 121 101 271|"
    "9 173 1 3 5 9 11 49 51 59 115|9 176 1 1 7 1 23 45 125 71 419|9 181 1 1 3 5 23 5 105 109 75|"
    "9 182 1 1 7 15 7 11 67 121 453|9 185 1 3 7 3 9 13 31 27 449|9 191 1 3 1 15 19 39 39 89 15|"
    "9 194 1 1 1 1 1 33 73 145 379|9 199 1 3 1 15 15 43 29 13 483|9 218 1 1 7 3 19 27 85 131 431|"
    "9 220 1 3 3 3 5 35 23 195 349|9 227 1 3 3 7 9 27 39 59 297|9 229 1 1 3 9 11 17 13 241 157|"
    "9 230 1 3 7 15 25 57 33 189 213|9 234 1 1 7 1 9 55 73 83 217|9 236 1 3 3 13 19 27 23 113 249|"
    "9 241 1 3 5 3 23 43 3 253 479|9 244 1 1 5 5 11 5 45 117 217|9 253 1 3 3 7 29 37 33 123 147|"
    "10 4 1 3 1 15 5 5 37 227 223 459|10 13 1 1 7 5 5 39 63 255 135 487|"
    "10 19 1 3 1 7 9 7 87 249 217 599|10 22 1 1 3 13 9 47 7 225 363 247|"
    "10 50 1 3 7 13 19 13 9 67 9 737|10 55 1 3 5 5 19 59 7 41 319 677|"
    "10 64 1 1 5 3 31 63 15 43 207 789|10 69 1 1 7 9 13 39 3 47 497 169|"
    "10 98 1 3 1 7 21 17 97 19 415 905|10 107 1 3 7 1 3 31 71 111 165 127|"
    "10 115 1 1 5 11 1 61 83 119 203 847|10 121 1 3 3 13 9 61 19 97 47 35|"
    "10 127 1 1 7 7 15 29 63 95 417 469|10 134 1 3 1 9 25 9 71 57 213 385|"
    "10 140 1 3 5 13 31 47 101 57 39 341|10 145 1 1 3 3 31 57 125 173 365 551|"
    "10 152 1 3 7 1 13 57 67 157 451 707|10 158 1 1 1 7 21 13 105 89 429 965|"
    "10 161 1 1 5 9 17 51 45 119 157 141|10 171 1 3 7 7 13 45 91 9 129 741|"
    "10 181 1 3 7 1 23 57 67 141 151 571|10 194 1 1 3 11 17 47 93 107 375 157|"
    "10 199 1 3 3 5 11 21 43 51 169 915|10 203 1 1 5 3 15 55 101 67 455 625|"
    "10 208 1 3 5 9 1 23 29 47 345 595|10 227 1 3 7 7 5 49 29 155 323 589|"
    "10 242 1 3 3 7 5 41 127 61 261 717";

// Direction integers m_1 .. m_32 of one dimension by Bratley and Fox's recurrence on the m's:
// m_k = 2 a_1 m_{k-1} ^ 4 a_2 m_{k-2} ^ ... ^ 2^(s-1) a_{s-1} m_{k-s+1} ^ 2^s m_{k-s} ^ m_{k-s}.
std::vector<std::uint64_t> direction_integers(int s, unsigned a, const std::vector<unsigned>& m0) {
  std::vector<std::uint64_t> m(33, 0);
  for (int k = 1; k <= s; ++k) m[k] = m0[k - 1];
  for (int k = s + 1; k <= 32; ++k) {
    std::uint64_t x = (m[k - s] << s) ^ m[k - s];
    for (int j = 1; j < s; ++j)
      if ((a >> (s - 1 - j)) & 1u) x ^= m[k - j] << j;
    m[k] = x;
  }
  return m;
}

TEST(SobolSampler, MatchesJoeKuoSequentialGeneration) {
  // Build every dimension's direction integers from the published text, then generate points
  // sequentially the Antonov-Saleev way (x_i = x_{i-1} ^ v_c, c the lowest zero bit of i - 1)
  // and compare with the random-access, Gray-code evaluation of the header.
  std::vector<std::vector<std::uint64_t>> m(1, std::vector<std::uint64_t>(33, 1));
  std::stringstream rows(kJoeKuo);
  std::string row;
  while (std::getline(rows, row, '|')) {
    std::stringstream fields(row);
    int s = 0;
    unsigned a = 0;
    fields >> s >> a;
    std::vector<unsigned> m0(static_cast<std::size_t>(s));
    for (auto& v : m0) fields >> v;
    ASSERT_FALSE(fields.fail()) << row;
    m.push_back(direction_integers(s, a, m0));
  }
  ASSERT_EQ(static_cast<int>(m.size()), kSobolMaxDims);
  const int n = 4096;
  std::vector<std::uint32_t> x(kSobolMaxDims, 0);
  for (int i = 0; i < n; ++i) {
    if (i > 0) {
      int c = 1;  // 1-based position of the lowest zero bit of i - 1
      for (unsigned v = static_cast<unsigned>(i - 1); v & 1u; v >>= 1) ++c;
      for (int d = 0; d < kSobolMaxDims; ++d)
        x[d] ^= static_cast<std::uint32_t>(m[d][c] << (32 - c));
    }
    for (int d = 0; d < kSobolMaxDims; ++d)
      ASSERT_EQ(sobol_bits(static_cast<std::uint32_t>(i), d), x[d]) << "i " << i << " d " << d;
  }
}

TEST(SobolSampler, FirstPublishedPoints) {
  // The first ten 3-D Sobol' points of the Joe-Kuo generator.
  const double want[10][3] = {{0, 0, 0},
                              {0.5, 0.5, 0.5},
                              {0.75, 0.25, 0.25},
                              {0.25, 0.75, 0.75},
                              {0.375, 0.375, 0.625},
                              {0.875, 0.875, 0.125},
                              {0.625, 0.125, 0.875},
                              {0.125, 0.625, 0.375},
                              {0.1875, 0.3125, 0.9375},
                              {0.6875, 0.8125, 0.4375}};
  const double half_cell = std::ldexp(1.0, -33);
  for (int i = 0; i < 10; ++i)
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(sobol_bits(static_cast<std::uint32_t>(i), d) * std::ldexp(1.0, -32), want[i][d]);
      // Unscrambled (seed 0) points sit half a 2^-32 cell inside the open interval.
      EXPECT_EQ(sobol_unit(0, i, d), want[i][d] + half_cell);
    }
  std::set<double> first4;
  for (int i = 0; i < 4; ++i) first4.insert(std::floor(sobol_unit(0, i, 0) * 4) / 4);
  EXPECT_EQ(first4, (std::set<double>{0.0, 0.25, 0.5, 0.75}));
}

// Every elementary interval [a 2^-k1, (a+1) 2^-k1) x [b 2^-k2, (b+1) 2^-k2), k1 + k2 = m, holds
// exactly one of the first 2^m points: dimensions 0 and 1 of Sobol' form a (0, m, 2)-net.
void expect_two_dim_net(std::uint64_t seed, int m) {
  const int n = 1 << m;
  for (int k1 = 0; k1 <= m; ++k1) {
    const int k2 = m - k1;
    std::vector<int> hits(static_cast<std::size_t>(n), 0);
    for (int i = 0; i < n; ++i) {
      const auto a = static_cast<int>(std::floor(sobol_unit(seed, i, 0) * (1 << k1)));
      const auto b = static_cast<int>(std::floor(sobol_unit(seed, i, 1) * (1 << k2)));
      ++hits[static_cast<std::size_t>((a << k2) | b)];
    }
    for (int h : hits) ASSERT_EQ(h, 1) << "seed " << seed << " k1 " << k1 << " k2 " << k2;
  }
}

TEST(SobolSampler, FirstPowerOfTwoPointsFormANet) {
  for (int m : {1, 4, 10}) expect_two_dim_net(0, m);
}

TEST(SobolSampler, ScrambledWithASeedKeepsTheNetAndChangesThePoints) {
  for (std::uint64_t seed : {std::uint64_t{7}, std::uint64_t{0xdeadbeefcafe}}) {
    for (int m : {1, 4, 10}) expect_two_dim_net(seed, m);
    int same = 0;
    for (int i = 0; i < 64; ++i) same += sobol_unit(seed, i, 0) == sobol_unit(0, i, 0);
    EXPECT_EQ(same, 0);
  }
  int same = 0;
  for (int i = 0; i < 64; ++i) same += sobol_unit(7, i, 3) == sobol_unit(8, i, 3);
  EXPECT_EQ(same, 0);
}

TEST(SobolSampler, EveryDimensionIsStratifiedInOneDimension) {
  // Each one-dimensional projection of the first 2^m points has one point per 2^-m cell.
  const int m = 9, n = 1 << m;
  for (std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{11}}) {
    for (int d = 0; d < kSobolMaxDims; ++d) {
      std::vector<int> hits(n, 0);
      for (int i = 0; i < n; ++i) {
        const double u = sobol_unit(seed, i, d);
        ASSERT_GT(u, 0.0);
        ASSERT_LT(u, 1.0);
        ++hits[static_cast<int>(std::floor(u * n))];
      }
      for (int h : hits) ASSERT_EQ(h, 1) << "dimension " << d << " seed " << seed;
    }
  }
}

// ------------------------------------------------------------------ inverse normal CDF

double phi_lower(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }  // Phi(x)
double phi_upper(double x) { return 0.5 * std::erfc(x / std::sqrt(2.0)); }   // 1 - Phi(x)

TEST(InverseNormal, RoundTripThroughErfcAtManyPoints) {
  // Phi(Phi^-1(u)) = u. Evaluating Phi at a computed x carries the conditioning of Phi: a relative
  // error r in x moves Phi's tail by about (1 + x^2) r relative, so the bound is
  // 8 eps (1 + x^2) relative to the tail probability min(u, 1 - u).
  const double eps = 2.220446049250313e-16;
  std::vector<double> us;
  for (int k = 1; k < 4000; ++k) us.push_back(k / 4000.0);
  for (int e = 3; e <= 300; ++e) us.push_back(std::pow(10.0, -e / 10.0));
  for (double t : {1e-300, 1e-100, 2.0e-17, 0.02425, 0.02424999999, 0.25, 0.2500000001})
    us.push_back(t);
  double worst = 0;
  for (double u : us) {
    for (bool upper : {false, true}) {
      if (upper && u < 1e-15) continue;  // 1 - u not representable as a distinct tail
      const double p = upper ? 1.0 - u : u;
      const double tail = upper ? 1.0 - p : p;  // exact
      const double x = inverse_normal_cdf(p);
      ASSERT_TRUE(std::isfinite(x)) << p;
      const double back = upper ? phi_upper(x) : phi_lower(x);
      const double rel = std::abs(back - tail) / tail;
      worst = std::max(worst, rel / (1.0 + x * x));
      EXPECT_LE(rel, 8.0 * eps * (1.0 + x * x)) << "p = " << p << " x = " << x;
    }
  }
  RecordProperty("worst_relative_over_1_plus_x2_in_eps", std::to_string(worst / eps));
}

TEST(InverseNormal, NearTheCentreThroughErf) {
  // For |x| small, Phi(x) - 1/2 = erf(x / sqrt 2) / 2 is relatively well conditioned: the
  // relative error of x itself shows.
  const double eps = 2.220446049250313e-16;
  for (int k = -1000; k <= 1000; ++k) {
    if (k == 0) continue;
    const double p = 0.5 + k * 1e-4;
    const double x = inverse_normal_cdf(p);
    const double back = 0.5 * std::erf(x / std::sqrt(2.0));
    EXPECT_LE(std::abs(back - (p - 0.5)), 8.0 * eps * std::abs(p - 0.5)) << p;
  }
  EXPECT_EQ(inverse_normal_cdf(0.5), 0.0);
}

TEST(InverseNormal, TabulatedQuantiles) {
  // Standard normal quantiles z_p (standard statistical tables, 16 digits).
  EXPECT_NEAR(inverse_normal_cdf(0.975), 1.959963984540054, 4e-15);
  EXPECT_NEAR(inverse_normal_cdf(0.95), 1.6448536269514722, 4e-15);
  EXPECT_NEAR(inverse_normal_cdf(0.99), 2.3263478740408408, 4e-15);
  EXPECT_NEAR(inverse_normal_cdf(0.999), 3.090232306167813, 8e-15);
  EXPECT_NEAR(inverse_normal_cdf(0.8413447460685429), 1.0, 4e-15);     // Phi(1)
  EXPECT_NEAR(inverse_normal_cdf(0.022750131948179207), -2.0, 4e-15);  // Phi(-2)
}

TEST(InverseNormal, SymmetricMonotoneAndLimits) {
  double prev = -HUGE_VAL;
  for (int k = 1; k < 1024; ++k) {
    const double p = k / 1024.0;
    const double x = inverse_normal_cdf(p);
    EXPECT_EQ(x, -inverse_normal_cdf(1.0 - p)) << p;
    EXPECT_GT(x, prev) << p;
    prev = x;
  }
  EXPECT_EQ(inverse_normal_cdf(0.0), -HUGE_VAL);
  EXPECT_EQ(inverse_normal_cdf(1.0), HUGE_VAL);
  EXPECT_TRUE(std::isnan(inverse_normal_cdf(NAN)));
  EXPECT_TRUE(std::isnan(inverse_normal_cdf(-0.1)));
  EXPECT_TRUE(std::isnan(inverse_normal_cdf(1.5)));
}

}  // namespace
}  // namespace ukes::sampling
