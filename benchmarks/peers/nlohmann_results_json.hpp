// Peer for bench_result_files: the results document's systems written as ukes wrote them before
// the record table (one nlohmann::json object per system, dumped), the baseline the streaming
// writer (service/results/results_json.cpp) is measured against in the same run.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "service/engine/engine.hpp"

namespace ukes::peers {

inline nlohmann::json nlohmann_system(const RunSpec& spec, const RunOutcome& out, int i) {
  using json = nlohmann::json;
  const ModelInfo& m = *spec.model;
  const BatchResults& r = out.results;
  const auto rows = [&](int first, int count) {
    json a = json::array();
    for (int k = 0; k < count; ++k) a.push_back(r.residual_at(first + k, i));
    return a;
  };
  json q = json::array(), qd = json::array();
  for (int j = 0; j < m.n; ++j) {
    q.push_back(r.q_at(j, i));
    qd.push_back(r.qd_at(j, i));
  }
  const auto ui = static_cast<std::size_t>(i);
  json sj = {
      {"id", i},
      {"status", status_name(static_cast<Status>(r.status[ui]))},
      {"t", r.t[ui]},
      {"q", std::move(q)},
      {"qd", std::move(qd)},
      {"residual_max",
       {{"position", rows(0, m.position_rows)},
        {"position_rate", rows(m.position_rows, m.position_rows)},
        {"velocity", rows(2 * m.position_rows, m.velocity_rows)}}},
      {"force_max", r.force_max[ui]},
      {"inconsistency_max", r.inconsistency_max[ui]},
      {"steps", r.steps[ui]},
      {"rejected", r.rejected[ui]},
  };
  if (spec.sweep && !spec.sweep->dimensions.empty()) {
    const Batch& b = spec.batch;
    const auto c = static_cast<std::size_t>(b.count);
    json sample = json::object();
    for (const auto& d : spec.sweep->dimensions) {
      const auto k = static_cast<std::size_t>(d.target.index) * c + ui;
      sample[d.name] = d.target.kind == SweepTarget::Kind::kParam ? b.params[k]
                       : d.target.kind == SweepTarget::Kind::kQ0  ? b.q0[k]
                                                                  : b.qd0[k];
    }
    sj["sample"] = std::move(sample);
  }
  return sj;
}

// The "systems" array as the old writer streamed it.
inline void nlohmann_systems(std::ostream& os, const RunSpec& spec, const RunOutcome& out) {
  os << "[";
  for (int i = 0; i < out.results.count; ++i)
    os << (i == 0 ? "\n" : ",\n") << nlohmann_system(spec, out, i).dump();
  os << "\n]\n";
}

}  // namespace ukes::peers
