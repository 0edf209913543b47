// Sweep generation: systems drawn from distributions over parameters and initial conditions.
//
// System i's sample depends only on (seed, sampler, i, count) and the dimension index: never on
// batch size, sharding, thread count or device. The unit-cube point is computed per (i, d) without
// state, so any subset of the systems can be generated anywhere (host or device).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/sweep/sampler.hpp"  // Sampler, DistributionKind, the per-(i, d) math

namespace ukes {

struct Distribution {
  using Kind = DistributionKind;  // kUniform, kNormal, kLognormal, kValues
  Kind kind = Kind::kUniform;
  double a = 0.0;              // uniform: lo; normal: mean; lognormal: mu
  double b = 1.0;              // uniform: hi; normal: sd; lognormal: sigma
  std::vector<double> values;  // kValues
};

// What a sweep dimension sets: params.NAME, q0[i], qd0[i] or control.params.NAME (the
// controller's belief, Batch::control_params).
struct SweepTarget {
  enum class Kind { kParam, kQ0, kQd0, kControlParam };
  Kind kind = Kind::kParam;
  int index = 0;  // parameter index or coordinate index
};

struct SweepDimension {
  std::string name;  // as written in the spec, e.g. "params.m1", "q0[0]"
  SweepTarget target;
  Distribution distribution;
};

struct SweepSpec {
  std::int64_t count = 0;
  std::uint64_t seed = 0;
  Sampler sampler = Sampler::kRandom;
  std::vector<SweepDimension> dimensions;
};

// The point of system i in dimension d of the unit cube, in (0, 1) (never exactly 0 or 1, so
// inverse CDFs stay finite).
double sweep_unit_sample(Sampler sampler, std::uint64_t seed, std::int64_t i, std::int64_t count,
                         int d);

// The value of a distribution at unit-cube coordinate u (inverse CDF; `values` picks floor(u * n)).
double distribution_value(const Distribution& dist, double u);

// Overwrites the swept targets of every system of `batch` (batch.count == spec.count), leaving
// all other components as they are. Throws std::invalid_argument (naming the dimension) for a
// target outside the model, a target swept twice, or invalid distribution parameters.
void apply_sweep(const SweepSpec& spec, Batch& batch);

// The same for a shard: `batch` holds systems first .. first + batch.count - 1 of the sweep
// (0 <= first, first + batch.count <= spec.count); they get exactly the values the full sweep
// gives them.
void apply_sweep(const SweepSpec& spec, Batch& batch, std::int64_t first);

}  // namespace ukes
