// What the spec fuzz targets check, shared by fuzz_run_spec and fuzz_typed_spec: parse_run_spec
// throws nothing but SpecError (LimitError included), whose field and reason are printable and
// bounded, and a spec it accepts is consistent, within the limits it was given, and means the same
// once written out as JSON text and parsed again (the server sends the spec to its clients that
// way: job header, spec_json) and when built a slice at a time (the server's worker does).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "service/runspec/model_source.hpp"
#include "service/runspec/printable_text.hpp"
#include "service/runspec/run_spec.hpp"
#include "service/runspec/spec_text.hpp"

namespace ukes::fuzz {

// Reports a broken invariant and aborts: libFuzzer keeps the input as a crash.
[[noreturn]] inline void fail(const char* what, const char* file, int line,
                              const std::string& detail = "") {
  std::fprintf(stderr, "\n==== fuzz invariant violated at %s:%d: %s%s%s\n", file, line, what,
               detail.empty() ? "" : ": ", detail.c_str());
  std::fflush(stderr);
  std::abort();
}

#define UKES_FUZZ_CHECK(cond)                                   \
  do {                                                          \
    if (!(cond)) ::ukes::fuzz::fail(#cond, __FILE__, __LINE__); \
  } while (0)
#define UKES_FUZZ_CHECK_MSG(cond, detail)                                 \
  do {                                                                    \
    if (!(cond)) ::ukes::fuzz::fail(#cond, __FILE__, __LINE__, (detail)); \
  } while (0)
#define UKES_FUZZ_FAIL(what, detail) ::ukes::fuzz::fail((what), __FILE__, __LINE__, (detail))

// Small limits: no valid spec makes a fuzz iteration allocate much.
inline ParseOptions small_options() {
  ParseOptions o;
  o.limits.max_systems = 256;
  o.limits.max_samples = 1000;
  o.limits.max_trajectory_bytes = std::int64_t{1} << 20;
  return o;
}

inline bool is_printable(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u <= 0x7e;
  });
}

inline void check_spec_error(const SpecError& e) {
  UKES_FUZZ_CHECK_MSG(is_printable(e.field()), e.what());
  UKES_FUZZ_CHECK_MSG(is_printable(e.reason()), e.what());
  UKES_FUZZ_CHECK_MSG(e.field().size() <= kMaxQuotedFieldBytes + 32, e.what());
  UKES_FUZZ_CHECK_MSG(e.reason().size() <= kMaxQuotedReasonBytes + 32, e.what());
  UKES_FUZZ_CHECK_MSG(std::string(e.what()) == e.field() + ": " + e.reason(), e.what());
}

// The outcome of one parse: the spec, or the error's field.
struct Parsed {
  bool ok = false;
  RunSpec spec;
  std::string field;  // when !ok
  std::string what;
};

// parse_run_spec(doc), where nothing but SpecError may escape.
inline Parsed parse_checked(const nlohmann::json& doc, const ParseOptions& options) {
  Parsed p;
  try {
    p.spec = parse_run_spec(doc, options);
    p.ok = true;
  } catch (const SpecError& e) {
    check_spec_error(e);
    p.field = e.field();
    p.what = e.what();
  } catch (const std::exception& e) {
    UKES_FUZZ_FAIL("parse_run_spec threw an exception that is not a SpecError", e.what());
  } catch (...) {
    UKES_FUZZ_FAIL("parse_run_spec threw something that is not a std::exception", "");
  }
  return p;
}

inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](double x, double y) {
           return x == y || (std::isnan(x) && std::isnan(y));  // NaN: a model's default may be
         });
}

// Whether two parses name one model: the catalogue's same entry, or one definition (an inline
// definition is parsed into a model of its own each time).
inline bool same_model(const ModelInfo* a, const ModelInfo* b) {
  if (a == b) return true;
  return a != nullptr && b != nullptr && a->user && b->user && model_id(*a) == model_id(*b);
}

// A spec parse_run_spec accepted is consistent and within `options`.
inline void check_run_spec(const RunSpec& s, const ParseOptions& options) {
  UKES_FUZZ_CHECK(s.model != nullptr);
  const ModelInfo& m = *s.model;
  // A catalogue model is the catalogue's; an inline definition is the spec's own.
  UKES_FUZZ_CHECK(m.user ? s.user_model.get() == s.model : find_model(m.name) == s.model);
  const Batch& b = s.batch;
  UKES_FUZZ_CHECK(b.model == s.model);
  UKES_FUZZ_CHECK(b.count >= 1);
  UKES_FUZZ_CHECK(b.count <= options.limits.max_systems);
  const auto count = static_cast<std::size_t>(b.count);
  const auto n = static_cast<std::size_t>(m.n);
  UKES_FUZZ_CHECK(b.params.size() == m.params.size() * count);
  UKES_FUZZ_CHECK(b.q0.size() == n * count);
  UKES_FUZZ_CHECK(b.qd0.size() == n * count);
  UKES_FUZZ_CHECK(s.params.size() == m.params.size());
  // Structural parameters are accepted only at their value, and never swept.
  for (std::size_t k = 0; k < m.params.size(); ++k) {
    if (!m.params[k].structural) continue;
    UKES_FUZZ_CHECK(s.params[k] == m.params[k].value);
    for (std::size_t i = 0; i < count; ++i)
      UKES_FUZZ_CHECK(b.params[k * count + i] == m.params[k].value);
  }
  UKES_FUZZ_CHECK(!(s.explicit_systems && s.sweep));
  if (s.sweep) {
    UKES_FUZZ_CHECK(s.sweep->count == b.count);
    for (const SweepDimension& d : s.sweep->dimensions) {
      UKES_FUZZ_CHECK(d.target.index >= 0);
      if (d.target.kind == SweepTarget::Kind::kParam) {
        UKES_FUZZ_CHECK(static_cast<std::size_t>(d.target.index) < m.params.size());
        UKES_FUZZ_CHECK(!m.params[static_cast<std::size_t>(d.target.index)].structural);
      } else {
        UKES_FUZZ_CHECK(d.target.index < m.n);
      }
    }
  }

  const EnsembleSettings& st = s.settings;
  UKES_FUZZ_CHECK(std::isfinite(st.t0) && std::isfinite(st.t_end) && st.t_end > st.t0);
  UKES_FUZZ_CHECK(std::isfinite(st.rtol) && st.rtol > 0);
  UKES_FUZZ_CHECK(std::isfinite(st.atol) && st.atol > 0);
  UKES_FUZZ_CHECK(std::isfinite(st.dt) && st.dt >= 0);
  UKES_FUZZ_CHECK(st.method != Method::kRk4 || st.dt > 0);
  UKES_FUZZ_CHECK(st.max_steps >= 1);
  UKES_FUZZ_CHECK(std::isfinite(st.alpha) && st.alpha >= 0);
  UKES_FUZZ_CHECK(std::isfinite(st.beta) && st.beta >= 0);
  UKES_FUZZ_CHECK(st.threads == 0);
  // Events (docs/EVENTS.md): within their limits, named, compiled.
  UKES_FUZZ_CHECK(st.events.count >= 0 && st.events.count <= kMaxEvents);
  UKES_FUZZ_CHECK(st.events.records >= 0 && st.events.records <= kMaxEventRecords);
  UKES_FUZZ_CHECK(st.event_names.size() == static_cast<std::size_t>(st.events.count));
  UKES_FUZZ_CHECK((st.events.count > 0) == (st.event_program != nullptr));

  const OutputSpec& o = s.output;
  UKES_FUZZ_CHECK(o.samples >= 2 && o.samples <= options.limits.max_samples);
  UKES_FUZZ_CHECK(st.samples == o.samples);
  UKES_FUZZ_CHECK(o.q || o.qd || o.residual || o.force);
  std::vector<bool> seen(count);
  for (std::int32_t id : o.trajectory_ids) {
    UKES_FUZZ_CHECK(id >= 0 && id < b.count);
    UKES_FUZZ_CHECK(!seen[static_cast<std::size_t>(id)]);
    seen[static_cast<std::size_t>(id)] = true;
  }
  const auto recorded = static_cast<std::int64_t>(o.trajectory_ids.size());
  switch (o.trajectories) {
    case TrajectoryMode::kNone:
      UKES_FUZZ_CHECK(recorded == 0);
      break;
    case TrajectoryMode::kAll:
      UKES_FUZZ_CHECK(recorded == b.count);
      break;
    case TrajectoryMode::kFirst:
      UKES_FUZZ_CHECK(o.first >= 0 && recorded == std::min<std::int64_t>(o.first, b.count));
      for (std::int64_t i = 0; i < recorded; ++i)
        UKES_FUZZ_CHECK(o.trajectory_ids[static_cast<std::size_t>(i)] == i);
      break;
    case TrajectoryMode::kList:
      break;
  }
  UKES_FUZZ_CHECK(trajectory_bytes(m, recorded, o.samples) <= options.limits.max_trajectory_bytes);

  UKES_FUZZ_CHECK(s.device_resolved == Device::kCpu || s.device_resolved == Device::kGpu);
  UKES_FUZZ_CHECK(options.gpu_available || s.device_resolved == Device::kCpu);
  UKES_FUZZ_CHECK(s.device != Device::kGpu || s.device_resolved == Device::kGpu);
}

// The server's way: validate without building the batch (ParseOptions::build_batch = false), then
// build it a slice at a time with batch_slice. Same verdict, and every slice holds exactly the
// systems of the whole batch.
inline void check_slices(const nlohmann::json& doc, const RunSpec& whole, ParseOptions options) {
  options.build_batch = false;
  const Parsed lazy = parse_checked(doc, options);
  UKES_FUZZ_CHECK_MSG(lazy.ok, "refused without build_batch: " + lazy.what);
  UKES_FUZZ_CHECK(same_model(lazy.spec.model, whole.model));
  UKES_FUZZ_CHECK(lazy.spec.batch.count == whole.batch.count);
  const int count = whole.batch.count, split = count / 3;
  for (const auto& range : {std::pair{0, split}, std::pair{split, count}}) {
    const int first = range.first, end = range.second;
    if (first == end) continue;
    Batch part;
    try {
      part = batch_slice(lazy.spec, first, end - first);
    } catch (const std::exception& e) {
      UKES_FUZZ_FAIL("batch_slice threw", e.what());
    }
    UKES_FUZZ_CHECK(part.model == lazy.spec.model && part.count == end - first);
    // Row r of a slice is row r of the whole batch, columns first .. end - 1.
    const auto rows_match = [&](const std::vector<double>& got, const std::vector<double>& all) {
      const auto c = static_cast<std::size_t>(count), pc = static_cast<std::size_t>(part.count);
      if (got.size() % pc != 0 || got.size() / pc != all.size() / c) return false;
      for (std::size_t r = 0; r < got.size() / pc; ++r) {
        const std::vector<double> a(got.begin() + static_cast<std::ptrdiff_t>(r * pc),
                                    got.begin() + static_cast<std::ptrdiff_t>((r + 1) * pc));
        const std::vector<double> b(all.begin() + static_cast<std::ptrdiff_t>(r * c + first),
                                    all.begin() + static_cast<std::ptrdiff_t>(r * c + end));
        if (!same_bits(a, b)) return false;
      }
      return true;
    };
    UKES_FUZZ_CHECK(rows_match(part.params, whole.batch.params));
    UKES_FUZZ_CHECK(rows_match(part.q0, whole.batch.q0));
    UKES_FUZZ_CHECK(rows_match(part.qd0, whole.batch.qd0));
  }
}

// Parses `doc` with `options` and checks the invariants above, and those of check_slices; an
// accepted spec is written out as JSON text (as the server writes a job's spec into its header)
// and must come back the same.
inline void check_spec_document(const nlohmann::json& doc, const ParseOptions& options) {
  const Parsed first = parse_checked(doc, options);
  if (!first.ok) return;
  check_run_spec(first.spec, options);
  check_slices(doc, first.spec, options);

  std::string text;
  try {
    text = doc.dump();
  } catch (const std::exception& e) {
    UKES_FUZZ_FAIL("an accepted spec cannot be written as JSON text", e.what());
  }
  nlohmann::json again;
  try {
    again = parse_spec_text(text);
  } catch (const std::exception& e) {
    UKES_FUZZ_FAIL("an accepted spec written as JSON text does not parse", e.what());
  }
  const Parsed second = parse_checked(again, options);
  UKES_FUZZ_CHECK_MSG(second.ok, "an accepted spec written as JSON text is refused: " +
                                     second.what + "\ntext: " + text.substr(0, 2000));
  const RunSpec &a = first.spec, &b = second.spec;
  UKES_FUZZ_CHECK(same_model(a.model, b.model));
  UKES_FUZZ_CHECK(a.batch.count == b.batch.count);
  UKES_FUZZ_CHECK(same_bits(a.batch.params, b.batch.params));
  UKES_FUZZ_CHECK(same_bits(a.batch.q0, b.batch.q0));
  UKES_FUZZ_CHECK(same_bits(a.batch.qd0, b.batch.qd0));
  UKES_FUZZ_CHECK(a.output.samples == b.output.samples);
  UKES_FUZZ_CHECK(a.output.trajectory_ids == b.output.trajectory_ids);
  UKES_FUZZ_CHECK(a.settings.method == b.settings.method);
  UKES_FUZZ_CHECK(a.settings.t0 == b.settings.t0 && a.settings.t_end == b.settings.t_end);
  UKES_FUZZ_CHECK(a.settings.dt == b.settings.dt);
  UKES_FUZZ_CHECK(a.settings.rtol == b.settings.rtol && a.settings.atol == b.settings.atol);
  UKES_FUZZ_CHECK(a.settings.max_steps == b.settings.max_steps);
  UKES_FUZZ_CHECK(a.settings.alpha == b.settings.alpha && a.settings.beta == b.settings.beta);
  UKES_FUZZ_CHECK(a.device == b.device && a.settings.precision == b.settings.precision);
}

}  // namespace ukes::fuzz
