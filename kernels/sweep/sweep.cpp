// Host glue of the sweep generator: validation and the loop over a batch. The per-(i, d) math is
// in sampler.hpp, shared with the device.
#include "kernels/sweep/sweep.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace ukes {
namespace {

constexpr std::int64_t kSobolMaxCount = std::int64_t{1} << 32;

std::string dimension_label(const SweepDimension& dim, std::size_t d) {
  return "sweep dimension '" + dim.name + "' (#" + std::to_string(d) + ")";
}

[[noreturn]] void fail(const SweepDimension& dim, std::size_t d, const std::string& what) {
  throw std::invalid_argument(dimension_label(dim, d) + ": " + what);
}

const char* target_kind_name(SweepTarget::Kind k) {
  switch (k) {
    case SweepTarget::Kind::kParam:
      return "parameter";
    case SweepTarget::Kind::kQ0:
      return "q0";
    case SweepTarget::Kind::kQd0:
      return "qd0";
    case SweepTarget::Kind::kControlParam:
      return "controller parameter";
  }
  return "target";
}

void check_distribution(const SweepDimension& dim, std::size_t d) {
  const Distribution& dist = dim.distribution;
  switch (dist.kind) {
    case Distribution::Kind::kUniform:
      if (!std::isfinite(dist.a) || !std::isfinite(dist.b) || dist.a > dist.b)
        fail(dim, d, "uniform [lo, hi] needs finite lo <= hi");
      return;
    case Distribution::Kind::kNormal:
      if (!std::isfinite(dist.a) || !std::isfinite(dist.b) || dist.b < 0)
        fail(dim, d, "normal [mean, sd] needs a finite mean and a finite sd >= 0");
      return;
    case Distribution::Kind::kLognormal:
      if (!std::isfinite(dist.a) || !std::isfinite(dist.b) || dist.b < 0)
        fail(dim, d, "lognormal [mu, sigma] needs a finite mu and a finite sigma >= 0");
      return;
    case Distribution::Kind::kValues:
      if (dist.values.empty()) fail(dim, d, "values [...] needs at least one value");
      for (double v : dist.values)
        if (!std::isfinite(v)) fail(dim, d, "values [...] must be finite");
      return;
  }
  fail(dim, d, "unknown distribution");
}

void check_target(const SweepDimension& dim, std::size_t d, const ModelInfo& model) {
  const int index = dim.target.index;
  const bool param = dim.target.kind == SweepTarget::Kind::kParam ||
                     dim.target.kind == SweepTarget::Kind::kControlParam;
  const int size = param ? static_cast<int>(model.params.size()) : model.n;
  if (index < 0 || index >= size)
    fail(dim, d,
         std::string(target_kind_name(dim.target.kind)) + " index " + std::to_string(index) +
             " is outside [0, " + std::to_string(size) + ") for model " + model.name);
}

void validate(const SweepSpec& spec, const Batch& batch, std::int64_t first) {
  if (batch.model == nullptr) throw std::invalid_argument("apply_sweep: the batch has no model");
  if (spec.count < 0) throw std::invalid_argument("sweep count must be >= 0");
  if (first < 0 || batch.count < 0 || first + batch.count > spec.count)
    throw std::invalid_argument("apply_sweep: systems [" + std::to_string(first) + ", " +
                                std::to_string(first + batch.count) +
                                ") are not inside the sweep's [0, " + std::to_string(spec.count) +
                                ")");
  const auto c = static_cast<std::size_t>(batch.count);
  if (batch.params.size() < batch.model->params.size() * c ||
      batch.q0.size() < static_cast<std::size_t>(batch.model->n) * c ||
      batch.qd0.size() < static_cast<std::size_t>(batch.model->n) * c)
    throw std::invalid_argument("apply_sweep: the batch's buffers are smaller than its count");
  for (const SweepDimension& dim : spec.dimensions)
    if (dim.target.kind == SweepTarget::Kind::kControlParam &&
        batch.control_params.size() < batch.model->params.size() * c)
      throw std::invalid_argument("apply_sweep: " + dim.name + " needs a controlled batch");
  if (spec.sampler == Sampler::kSobol && spec.count > kSobolMaxCount)
    throw std::invalid_argument("the sobol sampler supports at most 2^32 systems");
  const auto max_dims = static_cast<std::size_t>(sampling::kSobolMaxDims);
  if (spec.sampler == Sampler::kSobol && spec.dimensions.size() > max_dims)
    fail(spec.dimensions[max_dims], max_dims,
         "the sobol sampler supports at most " + std::to_string(max_dims) + " dimensions");
  for (std::size_t d = 0; d < spec.dimensions.size(); ++d) {
    const SweepDimension& dim = spec.dimensions[d];
    check_target(dim, d, *batch.model);
    check_distribution(dim, d);
    for (std::size_t e = 0; e < d; ++e) {
      const SweepTarget& other = spec.dimensions[e].target;
      if (other.kind == dim.target.kind && other.index == dim.target.index)
        fail(dim, d, "sets the same target as " + dimension_label(spec.dimensions[e], e));
    }
  }
}

double* target_column(Batch& batch, const SweepTarget& target) {
  const auto offset =
      static_cast<std::size_t>(target.index) * static_cast<std::size_t>(batch.count);
  switch (target.kind) {
    case SweepTarget::Kind::kParam:
      return batch.params.data() + offset;
    case SweepTarget::Kind::kQ0:
      return batch.q0.data() + offset;
    case SweepTarget::Kind::kQd0:
      return batch.qd0.data() + offset;
    case SweepTarget::Kind::kControlParam:
      return batch.control_params.data() + offset;
  }
  return nullptr;
}

}  // namespace

double sweep_unit_sample(Sampler sampler, std::uint64_t seed, std::int64_t i, std::int64_t count,
                         int d) {
  if (i < 0 || i >= count)
    throw std::out_of_range("sweep_unit_sample: system " + std::to_string(i) + " outside [0, " +
                            std::to_string(count) + ")");
  if (d < 0) throw std::out_of_range("sweep_unit_sample: negative dimension");
  if (sampler == Sampler::kSobol) {
    if (d >= sampling::kSobolMaxDims)
      throw std::out_of_range("sweep_unit_sample: the sobol sampler supports at most " +
                              std::to_string(sampling::kSobolMaxDims) + " dimensions");
    if (i >= kSobolMaxCount)
      throw std::out_of_range("sweep_unit_sample: the sobol sampler supports i < 2^32");
  }
  return sampling::unit_sample(sampler, seed, i, count, d);
}

double distribution_value(const Distribution& dist, double u) {
  if (dist.kind == Distribution::Kind::kValues && dist.values.empty())
    throw std::invalid_argument("distribution_value: empty values");
  return sampling::distribution_at(dist.kind, dist.a, dist.b, dist.values.data(),
                                   static_cast<std::int64_t>(dist.values.size()), u);
}

void apply_sweep(const SweepSpec& spec, Batch& batch) {
  if (spec.count != batch.count)
    throw std::invalid_argument("apply_sweep: the batch has " + std::to_string(batch.count) +
                                " systems, the sweep " + std::to_string(spec.count));
  apply_sweep(spec, batch, 0);
}

void apply_sweep(const SweepSpec& spec, Batch& batch, std::int64_t first) {
  validate(spec, batch, first);
  for (std::size_t d = 0; d < spec.dimensions.size(); ++d) {
    const SweepDimension& dim = spec.dimensions[d];
    const Distribution& dist = dim.distribution;
    double* column = target_column(batch, dim.target);
    for (int i = 0; i < batch.count; ++i) {
      const double u = sampling::unit_sample(spec.sampler, spec.seed, first + i, spec.count,
                                             static_cast<int>(d));
      column[i] = sampling::distribution_at(dist.kind, dist.a, dist.b, dist.values.data(),
                                            static_cast<std::int64_t>(dist.values.size()), u);
    }
  }
}

}  // namespace ukes
