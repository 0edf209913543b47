// Host sweep API: determinism and shard independence, distributions' sample statistics against
// their closed-form moments, and apply_sweep's validation.
#include "kernels/sweep/sweep.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ukes {
namespace {

const ModelInfo& duffing() {
  const ModelInfo* m = find_model("duffing");
  if (m == nullptr) throw std::runtime_error("duffing missing");
  return *m;
}

SweepDimension dim(const std::string& name, SweepTarget::Kind kind, int index,
                   Distribution::Kind dk, double a, double b, std::vector<double> values = {}) {
  SweepDimension d;
  d.name = name;
  d.target = {kind, index};
  d.distribution.kind = dk;
  d.distribution.a = a;
  d.distribution.b = b;
  d.distribution.values = std::move(values);
  return d;
}

// A duffing sweep touching a parameter, a position and a velocity with every distribution.
SweepSpec example_spec(Sampler sampler, std::int64_t count, std::uint64_t seed) {
  SweepSpec s;
  s.count = count;
  s.seed = seed;
  s.sampler = sampler;
  s.dimensions = {
      dim("params.m1", SweepTarget::Kind::kParam, 0, Distribution::Kind::kUniform, 1.5, 2.5),
      dim("q0[0]", SweepTarget::Kind::kQ0, 0, Distribution::Kind::kNormal, 1.0, 0.01),
      dim("params.k1", SweepTarget::Kind::kParam, 2, Distribution::Kind::kLognormal, 2.0, 0.1),
      dim("qd0[1]", SweepTarget::Kind::kQd0, 1, Distribution::Kind::kValues, 0, 0,
          {-1.0, 0.5, 4.0}),
  };
  return s;
}

std::vector<double> draws(const SweepSpec& spec, int d) {
  std::vector<double> v(static_cast<std::size_t>(spec.count));
  for (std::int64_t i = 0; i < spec.count; ++i)
    v[static_cast<std::size_t>(i)] =
        distribution_value(spec.dimensions[static_cast<std::size_t>(d)].distribution,
                           sweep_unit_sample(spec.sampler, spec.seed, i, spec.count, d));
  return v;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double sd_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size()));
}

const Sampler kSamplers[] = {Sampler::kRandom, Sampler::kLhs, Sampler::kSobol};

// ------------------------------------------------------------------ determinism

TEST(Sweep, SameInputsSameOutputs) {
  for (Sampler sampler : kSamplers) {
    const SweepSpec spec = example_spec(sampler, 500, 42);
    Batch a = Batch::defaults(duffing(), 500), b = Batch::defaults(duffing(), 500);
    apply_sweep(spec, a);
    apply_sweep(spec, b);
    EXPECT_EQ(a.params, b.params);
    EXPECT_EQ(a.q0, b.q0);
    EXPECT_EQ(a.qd0, b.qd0);
  }
}

TEST(Sweep, AShardEqualsTheSliceOfTheFullGeneration) {
  const int count = 1000;
  for (Sampler sampler : kSamplers) {
    const SweepSpec spec = example_spec(sampler, count, 9);
    Batch full = Batch::defaults(duffing(), count);
    apply_sweep(spec, full);
    for (auto [first, last] : {std::pair{0, 300}, std::pair{300, 1000}, std::pair{517, 518}}) {
      const int n = last - first;
      Batch shard = Batch::defaults(duffing(), n);
      apply_sweep(spec, shard, first);
      for (int i = 0; i < n; ++i) {
        EXPECT_EQ(shard.param(0, i), full.param(0, first + i));
        EXPECT_EQ(shard.param(2, i), full.param(2, first + i));
        EXPECT_EQ(shard.q(0, i), full.q(0, first + i));
        EXPECT_EQ(shard.qd(1, i), full.qd(1, first + i));
      }
      // And a system computed alone, point-wise.
      for (int i = first; i < last; i += 37)
        EXPECT_EQ(distribution_value(spec.dimensions[1].distribution,
                                     sweep_unit_sample(sampler, 9, i, count, 1)),
                  full.q(0, i));
    }
  }
}

TEST(Sweep, RandomAndSobolSamplesDoNotDependOnCount) {
  for (Sampler sampler : {Sampler::kRandom, Sampler::kSobol})
    for (int i = 0; i < 100; ++i)
      EXPECT_EQ(sweep_unit_sample(sampler, 5, i, 100, 2),
                sweep_unit_sample(sampler, 5, i, 7777, 2));
}

TEST(Sweep, UntouchedComponentsKeepTheirBaseValues) {
  const SweepSpec spec = example_spec(Sampler::kLhs, 64, 3);
  Batch b = Batch::defaults(duffing(), 64);
  for (int i = 0; i < 64; ++i) b.param(1, i) = 100.0 + i;  // m2: not swept
  const Batch before = b;
  apply_sweep(spec, b);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(b.param(1, i), 100.0 + i);
    for (int k = 3; k < static_cast<int>(duffing().params.size()); ++k)
      EXPECT_EQ(b.params[static_cast<std::size_t>(k) * 64 + i],
                before.params[static_cast<std::size_t>(k) * 64 + i]);
    EXPECT_EQ(b.q(1, i), before.q0[64 + static_cast<std::size_t>(i)]);
    EXPECT_EQ(b.qd(0, i), before.qd0[static_cast<std::size_t>(i)]);
    EXPECT_NE(b.param(0, i), before.params[static_cast<std::size_t>(i)]);
  }
}

TEST(Sweep, DifferentSeedsDiffer) {
  for (Sampler sampler : kSamplers) {
    Batch a = Batch::defaults(duffing(), 256), b = Batch::defaults(duffing(), 256);
    apply_sweep(example_spec(sampler, 256, 1), a);
    apply_sweep(example_spec(sampler, 256, 2), b);
    int same = 0;
    for (int i = 0; i < 256; ++i) same += a.param(0, i) == b.param(0, i);
    EXPECT_EQ(same, 0) << static_cast<int>(sampler);
  }
}

// ------------------------------------------------------------------ distributions

TEST(Distributions, UniformMapsOntoItsInterval) {
  SweepSpec s = example_spec(Sampler::kRandom, 100000, 17);
  const std::vector<double> v = draws(s, 0);
  for (double x : v) {
    ASSERT_GT(x, 1.5);
    ASSERT_LT(x, 2.5);
  }
  // U(1.5, 2.5): mean 2, sd 1/sqrt(12).
  EXPECT_NEAR(mean_of(v), 2.0, 4.0 / std::sqrt(12.0 * 1e5));
  EXPECT_NEAR(sd_of(v), 1.0 / std::sqrt(12.0), 4.0 * std::sqrt((1.0 / 80 - 1.0 / 144) / 1e5) * 2);
  Distribution d;
  d.a = -3;
  d.b = 5;
  EXPECT_EQ(distribution_value(d, 0.25), -1.0);
}

TEST(Distributions, NormalSampleMoments) {
  for (Sampler sampler : kSamplers) {
    SweepSpec s = example_spec(sampler, 100000, 23);
    s.dimensions[1].distribution.a = 3.0;
    s.dimensions[1].distribution.b = 0.5;
    const std::vector<double> v = draws(s, 1);
    const double n = 1e5;
    // N(3, 0.5^2): sample mean sd 0.5 / sqrt(n); sample sd has sd ~ 0.5 / sqrt(2 n).
    EXPECT_NEAR(mean_of(v), 3.0, 4.0 * 0.5 / std::sqrt(n));
    EXPECT_NEAR(sd_of(v), 0.5, 4.0 * 0.5 / std::sqrt(2 * n));
    // P(|X - mean| < sd) = erf(1 / sqrt 2).
    const double p1 = std::erf(1.0 / std::sqrt(2.0));
    double inside = 0;
    for (double x : v) inside += std::abs(x - 3.0) < 0.5;
    EXPECT_NEAR(inside / n, p1, 4.0 * std::sqrt(p1 * (1 - p1) / n));
  }
  Distribution d;
  d.kind = Distribution::Kind::kNormal;
  d.a = 1.25;
  d.b = 0.0;
  EXPECT_EQ(distribution_value(d, 0.9), 1.25);  // sd 0: the mean itself
  d.b = 2.0;
  EXPECT_EQ(distribution_value(d, 0.5), 1.25);
}

TEST(Distributions, LognormalSampleMoments) {
  SweepSpec s = example_spec(Sampler::kRandom, 100000, 29);
  const double mu = 2.0, sigma = 0.1, n = 1e5;
  const std::vector<double> v = draws(s, 2);
  std::vector<double> logs;
  for (double x : v) {
    ASSERT_GT(x, 0.0);
    logs.push_back(std::log(x));
  }
  EXPECT_NEAR(mean_of(logs), mu, 4.0 * sigma / std::sqrt(n));
  EXPECT_NEAR(sd_of(logs), sigma, 4.0 * sigma / std::sqrt(2 * n));
  // E X = exp(mu + sigma^2 / 2), Var X = (exp(sigma^2) - 1) exp(2 mu + sigma^2).
  const double mean = std::exp(mu + sigma * sigma / 2);
  const double sd = std::sqrt((std::exp(sigma * sigma) - 1) * std::exp(2 * mu + sigma * sigma));
  EXPECT_NEAR(mean_of(v), mean, 4.0 * sd / std::sqrt(n));
  Distribution d;
  d.kind = Distribution::Kind::kLognormal;
  d.a = mu;
  d.b = sigma;
  EXPECT_DOUBLE_EQ(distribution_value(d, 0.5), std::exp(mu));  // the median
}

TEST(Distributions, ValuesPickEachEntryWithEqualProbability) {
  // Random: binomial frequencies.
  {
    SweepSpec s = example_spec(Sampler::kRandom, 60000, 31);
    const std::vector<double> v = draws(s, 3);
    double c[3] = {0, 0, 0};
    for (double x : v) {
      if (x == -1.0)
        ++c[0];
      else if (x == 0.5)
        ++c[1];
      else if (x == 4.0)
        ++c[2];
      else
        ADD_FAILURE() << "value not in the list: " << x;
    }
    for (double k : c) EXPECT_NEAR(k / 60000, 1.0 / 3, 4.0 * std::sqrt(2.0 / 9 / 60000));
  }
  // LHS with a count divisible by the list size: floor(u n) is exact per stratum, so the counts
  // are exactly equal.
  {
    SweepSpec s = example_spec(Sampler::kLhs, 300, 31);
    const std::vector<double> v = draws(s, 3);
    EXPECT_EQ(std::count(v.begin(), v.end(), -1.0), 100);
    EXPECT_EQ(std::count(v.begin(), v.end(), 0.5), 100);
    EXPECT_EQ(std::count(v.begin(), v.end(), 4.0), 100);
  }
  Distribution d;
  d.kind = Distribution::Kind::kValues;
  d.values = {10, 20, 30};
  EXPECT_EQ(distribution_value(d, 1e-300), 10);
  EXPECT_EQ(distribution_value(d, 1.0 / 3 - 1e-12), 10);
  EXPECT_EQ(distribution_value(d, 0.5), 20);
  EXPECT_EQ(distribution_value(d, 1.0 - 1e-16), 30);
  d.values.clear();
  EXPECT_THROW(distribution_value(d, 0.5), std::invalid_argument);
}

TEST(Distributions, LhsAndSobolMeansAreFarTighterThanRandom) {
  // Stratified designs integrate the linear part exactly up to one stratum: |mean - 2| is bounded
  // by the cell width, against a random sd of 1/sqrt(12 n) ~ 0.0036 at n = 2^12.
  for (Sampler sampler : {Sampler::kLhs, Sampler::kSobol}) {
    const std::vector<double> v = draws(example_spec(sampler, 4096, 77), 0);
    EXPECT_LT(std::abs(mean_of(v) - 2.0), 1.0 / 4096) << static_cast<int>(sampler);
  }
}

// ------------------------------------------------------------------ validation

std::string error_of(const SweepSpec& spec, Batch& b) {
  try {
    apply_sweep(spec, b);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SweepValidation, TargetsOutsideTheModelNameTheDimension) {
  Batch b = Batch::defaults(duffing(), 10);
  SweepSpec s = example_spec(Sampler::kRandom, 10, 1);
  s.dimensions.push_back(
      dim("q0[2]", SweepTarget::Kind::kQ0, 2, Distribution::Kind::kUniform, 0, 1));
  EXPECT_NE(error_of(s, b).find("q0[2]"), std::string::npos) << error_of(s, b);
  s.dimensions.back() =
      dim("qd0[-1]", SweepTarget::Kind::kQd0, -1, Distribution::Kind::kUniform, 0, 1);
  EXPECT_NE(error_of(s, b).find("qd0[-1]"), std::string::npos);
  s.dimensions.back() =
      dim("params.bogus", SweepTarget::Kind::kParam, 11, Distribution::Kind::kUniform, 0, 1);
  EXPECT_NE(error_of(s, b).find("params.bogus"), std::string::npos);
  s.dimensions.back() =
      dim("params.m1 again", SweepTarget::Kind::kParam, 0, Distribution::Kind::kUniform, 0, 1);
  EXPECT_NE(error_of(s, b).find("params.m1 again"), std::string::npos);  // swept twice
  // Nothing was written when validation failed.
  const Batch pristine = Batch::defaults(duffing(), 10);
  EXPECT_EQ(b.params, pristine.params);
  EXPECT_EQ(b.q0, pristine.q0);
}

TEST(SweepValidation, DistributionParameters) {
  Batch b = Batch::defaults(duffing(), 10);
  auto bad = [&](Distribution::Kind k, double a, double c, std::vector<double> values = {}) {
    SweepSpec s = example_spec(Sampler::kLhs, 10, 1);
    s.dimensions[1] = dim("q0[0]", SweepTarget::Kind::kQ0, 0, k, a, c, std::move(values));
    return error_of(s, b).find("q0[0]") != std::string::npos;
  };
  EXPECT_TRUE(bad(Distribution::Kind::kUniform, 2.0, 1.0));
  EXPECT_TRUE(bad(Distribution::Kind::kUniform, 0.0, INFINITY));
  EXPECT_TRUE(bad(Distribution::Kind::kNormal, 0.0, -1.0));
  EXPECT_TRUE(bad(Distribution::Kind::kNormal, NAN, 1.0));
  EXPECT_TRUE(bad(Distribution::Kind::kLognormal, 0.0, -0.5));
  EXPECT_TRUE(bad(Distribution::Kind::kValues, 0, 0));
  EXPECT_TRUE(bad(Distribution::Kind::kValues, 0, 0, {1.0, NAN}));
  EXPECT_FALSE(bad(Distribution::Kind::kUniform, 1.0, 1.0));
  EXPECT_FALSE(bad(Distribution::Kind::kNormal, 1.0, 0.0));
}

TEST(SweepValidation, CountsShardsAndSobolLimits) {
  Batch b = Batch::defaults(duffing(), 10);
  EXPECT_THROW(apply_sweep(example_spec(Sampler::kRandom, 11, 1), b), std::invalid_argument);
  EXPECT_THROW(apply_sweep(example_spec(Sampler::kRandom, 15, 1), b, 6), std::invalid_argument);
  EXPECT_THROW(apply_sweep(example_spec(Sampler::kRandom, 15, 1), b, -1), std::invalid_argument);
  EXPECT_NO_THROW(apply_sweep(example_spec(Sampler::kRandom, 15, 1), b, 5));

  SweepSpec s = example_spec(Sampler::kSobol, 10, 1);
  s.dimensions.clear();
  for (int d = 0; d < sampling::kSobolMaxDims + 1; ++d)
    s.dimensions.push_back(dim("dim" + std::to_string(d), SweepTarget::Kind::kParam, d % 11,
                               Distribution::Kind::kUniform, 0, 1));
  const std::string e = error_of(s, b);
  EXPECT_NE(e.find("dim" + std::to_string(sampling::kSobolMaxDims)), std::string::npos) << e;
  EXPECT_NE(e.find("sobol"), std::string::npos) << e;
  s.dimensions.resize(11);  // every parameter of duffing once
  EXPECT_NO_THROW(apply_sweep(s, b));
  EXPECT_THROW(sweep_unit_sample(Sampler::kSobol, 1, 0, 10, sampling::kSobolMaxDims),
               std::out_of_range);
  EXPECT_NO_THROW(sweep_unit_sample(Sampler::kSobol, 1, 0, 10, sampling::kSobolMaxDims - 1));
  EXPECT_THROW(sweep_unit_sample(Sampler::kRandom, 1, 10, 10, 0), std::out_of_range);
  EXPECT_THROW(sweep_unit_sample(Sampler::kRandom, 1, -1, 10, 0), std::out_of_range);
}

}  // namespace
}  // namespace ukes
