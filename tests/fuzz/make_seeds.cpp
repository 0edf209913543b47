// Writes the binary seed corpora of fuzz_typed_spec and fuzz_result_assembler from real messages:
//
//   build-fuzz/tests/fuzz/fuzz_make_seeds tests/fuzz/corpus
//
// fuzz_typed_spec/<name>.pb: every JSON seed of fuzz_run_spec/ that is an object, as the typed
// ukes.v1.RunSpec that mirrors it (fields whose JSON type the message cannot hold are left out),
// plus a few typed-only cases (trajectories and trajectory_ids together, a distribution of no
// kind).
// fuzz_result_assembler/<name>.bin: result streams as ukes-server publishes them (a header as
// publish_header writes it, summaries and trajectories cut by result_chunks.cpp, progress,
// statistics, the end), for a few small specs, with synthetic numbers in place of an integration
// (the kernels are not part of the fuzz build), framed as fuzz_result_assembler.cpp reads them.
// Every stream is checked to go through a ResultAssembler.
//
// Output is deterministic (maps serialized in key order), so the committed seeds only change when
// the protocol or the spec seeds do. Earlier .pb / .bin files in the two folders are removed.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/ensemble/statistics.hpp"
#include "service/engine/engine.hpp"
#include "service/protocol/model_proto.hpp"
#include "service/protocol/result_assembler.hpp"
#include "service/protocol/result_chunks.hpp"
#include "service/protocol/spec_proto.hpp"
#include "service/runspec/run_spec.hpp"
#include "service/runspec/spec_text.hpp"
#include "ukes/v1/ukes.pb.h"

namespace ukes {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string deterministic_bytes(const google::protobuf::MessageLite& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&coded);
  }
  return out;
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw std::runtime_error("cannot write " + path.string());
}

std::string read_file(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void clear(const fs::path& dir, const std::string& extension) {
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == extension) fs::remove(e.path());
}

// ------------------------------------------------------------------ typed specs from JSON specs

void set_params(const json& j, google::protobuf::Map<std::string, double>* out) {
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.value().is_number()) (*out)[it.key()] = it.value().get<double>();
}

void set_doubles(const json& j, google::protobuf::RepeatedField<double>* out) {
  if (!j.is_array()) return;
  for (const auto& v : j)
    if (v.is_number()) out->Add(v.get<double>());
}

void set_distribution(const json& j, v1::Distribution* d) {
  if (!j.is_object() || j.empty()) return;
  const std::string kind = j.begin().key();
  const json& a = j.begin().value();
  const auto at = [&](std::size_t i) {
    return a.is_array() && i < a.size() && a[i].is_number() ? a[i].get<double>() : 0.0;
  };
  if (kind == "uniform") {
    d->mutable_uniform()->set_low(at(0));
    d->mutable_uniform()->set_high(at(1));
  } else if (kind == "normal") {
    d->mutable_normal()->set_mean(at(0));
    d->mutable_normal()->set_sd(at(1));
  } else if (kind == "lognormal") {
    d->mutable_lognormal()->set_mu(at(0));
    d->mutable_lognormal()->set_sigma(at(1));
  } else if (kind == "values") {
    set_doubles(a, d->mutable_values()->mutable_values());
  }
}

// The typed message that mirrors `j` as far as its types allow (spec_json_from_proto's inverse).
v1::RunSpec typed_from_json(const json& j) {
  v1::RunSpec s;
  const auto str = [&](const json& o, const char* key) -> const json* {
    const auto it = o.find(key);
    return it != o.end() && it->is_string() ? &*it : nullptr;
  };
  const auto num = [&](const json& o, const char* key) -> const json* {
    const auto it = o.find(key);
    return it != o.end() && it->is_number() ? &*it : nullptr;
  };
  const auto obj = [&](const json& o, const char* key) -> const json* {
    const auto it = o.find(key);
    return it != o.end() && it->is_object() ? &*it : nullptr;
  };
  if (const json* v = str(j, "model")) s.set_model(v->get<std::string>());
  if (const json* v = str(j, "description")) s.set_description(v->get<std::string>());
  if (const json* v = obj(j, "params")) set_params(*v, s.mutable_params());
  if (const auto it = j.find("systems"); it != j.end() && it->is_array()) {
    for (const auto& sys : *it) {
      v1::SystemSpec* o = s.add_systems();
      if (!sys.is_object()) continue;
      if (const json* v = obj(sys, "params")) set_params(*v, o->mutable_params());
      if (sys.contains("q0")) set_doubles(sys["q0"], o->mutable_q0());
      if (sys.contains("qd0")) set_doubles(sys["qd0"], o->mutable_qd0());
    }
  }
  if (const json* w = obj(j, "sweep")) {
    v1::Sweep* o = s.mutable_sweep();
    if (const json* v = num(*w, "count")) o->set_count(v->get<std::int64_t>());
    if (const json* v = num(*w, "seed")) o->set_seed(v->get<std::uint64_t>());
    if (const json* v = str(*w, "sampler")) o->set_sampler(v->get<std::string>());
    if (const json* vary = obj(*w, "vary"))
      for (auto it = vary->begin(); it != vary->end(); ++it)
        set_distribution(it.value(), &(*o->mutable_vary())[it.key()]);
  }
  if (const auto it = j.find("assemble"); it != j.end() && it->is_boolean())
    s.set_assemble(it->get<bool>());
  if (const json* in = obj(j, "integrator")) {
    v1::IntegratorSpec* o = s.mutable_integrator();
    if (const json* v = str(*in, "method")) o->set_method(v->get<std::string>());
    if (const json* v = num(*in, "t0")) o->set_t0(v->get<double>());
    if (const json* v = num(*in, "t_end")) o->set_t_end(v->get<double>());
    if (const json* v = num(*in, "dt")) o->set_dt(v->get<double>());
    if (const json* v = num(*in, "rtol")) o->set_rtol(v->get<double>());
    if (const json* v = num(*in, "atol")) o->set_atol(v->get<double>());
    if (const json* v = num(*in, "max_steps")) o->set_max_steps(v->get<std::int64_t>());
  }
  if (const json* st = obj(j, "stabilization")) {
    v1::StabilizationSpec* o = s.mutable_stabilization();
    if (const json* v = num(*st, "alpha")) o->set_alpha(v->get<double>());
    if (const json* v = num(*st, "beta")) o->set_beta(v->get<double>());
    if (const auto it = st->find("projection"); it != st->end() && it->is_boolean())
      o->set_projection(it->get<bool>());
    if (const json* v = num(*st, "inconsistency_tol")) o->set_inconsistency_tol(v->get<double>());
    if (const json* v = num(*st, "projection_tol")) o->set_projection_tol(v->get<double>());
  }
  if (const json* v = str(j, "precision")) s.set_precision(v->get<std::string>());
  if (const json* v = str(j, "device")) s.set_device(v->get<std::string>());
  if (const json* v = str(j, "gpu_path")) s.set_gpu_path(v->get<std::string>());
  if (const json* out = obj(j, "output")) {
    v1::OutputSpec* o = s.mutable_output();
    if (const json* v = num(*out, "samples")) o->set_samples(v->get<std::int32_t>());
    if (const auto it = out->find("trajectories"); it != out->end()) {
      if (it->is_string()) o->set_trajectories(it->get<std::string>());
      if (it->is_array())
        for (const auto& id : *it)
          if (id.is_number_integer()) o->add_trajectory_ids(id.get<std::int32_t>());
    }
    if (const auto it = out->find("fields"); it != out->end() && it->is_array())
      for (const auto& f : *it)
        if (f.is_string()) o->add_fields(f.get<std::string>());
  }
  return s;
}

int write_typed_seeds(const fs::path& corpus) {
  const fs::path from = corpus / "fuzz_run_spec", to = corpus / "fuzz_typed_spec";
  clear(to, ".pb");
  std::vector<fs::path> inputs;
  for (const auto& e : fs::directory_iterator(from)) inputs.push_back(e.path());
  std::sort(inputs.begin(), inputs.end());
  std::set<std::string> written;
  const auto emit = [&](const std::string& name, const v1::RunSpec& s) {
    const std::string bytes = deterministic_bytes(s);
    if (!written.insert(bytes).second) return;
    write_file(to / (name + ".pb"), bytes);
  };
  for (const fs::path& p : inputs) {
    json doc;
    try {
      doc = parse_spec_text(read_file(p));
    } catch (const SpecError&) {
      continue;
    }
    if (!doc.is_object()) continue;
    emit(p.stem().string(), typed_from_json(doc));
  }
  // Cases only the typed form can express.
  json scara = parse_spec_text(R"({"model": "scara", "sweep": {"count": 5, "sampler": "sobol",
      "vary": {"params.m4": {"uniform": [0.3, 0.8]}}},
      "output": {"samples": 3, "trajectories": [0, 4]}})");
  v1::RunSpec both = typed_from_json(scara);
  both.mutable_output()->set_trajectories("all");
  emit("typed-trajectories-and-ids", both);
  v1::RunSpec no_kind = typed_from_json(scara);
  (*no_kind.mutable_sweep()->mutable_vary())["params.m3"];
  emit("typed-distribution-without-kind", no_kind);
  v1::RunSpec empty_system = typed_from_json(json{{"model", "duffing"}});
  empty_system.add_systems();
  empty_system.add_systems()->add_q0(0.5);
  emit("typed-empty-and-short-systems", empty_system);
  return static_cast<int>(written.size());
}

// ------------------------------------------------------------------ result streams

std::string frame(const std::vector<v1::StreamJobResultsResponse>& chunks) {
  std::string out;
  for (const auto& c : chunks) {
    const std::string bytes = deterministic_bytes(c);
    // Field 1, length-delimited: the tag, the length as a varint, the bytes.
    out += '\x0a';
    auto n = static_cast<std::uint64_t>(bytes.size());
    for (; n >= 0x80; n >>= 7) out += static_cast<char>((n & 0x7f) | 0x80);
    out += static_cast<char>(n);
    out += bytes;
  }
  return out;
}

// Deterministic stand-in for an integration's results: every buffer filled, some systems failed.
BatchResults synthetic_results(const RunSpec& spec) {
  BatchResults r;
  r.allocate(spec.batch, spec.settings.samples, spec.output.trajectory_ids);
  const std::vector<double> times = sample_times(spec.settings);
  for (int i = 0; i < r.count; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const bool ok = i % 5 != 3;
    r.status[u] = ok ? static_cast<int>(Status::kOk) : static_cast<int>(Status::kMaxSteps);
    r.t[u] = ok ? spec.settings.t_end : 0.5 * (spec.settings.t0 + spec.settings.t_end);
    for (int j = 0; j < r.n; ++j) {
      r.q[static_cast<std::size_t>(j) * r.count + u] =
          spec.batch.q0[static_cast<std::size_t>(j) * r.count + u] + 0.01 * (i + 1);
      r.qd[static_cast<std::size_t>(j) * r.count + u] = -0.1 * j + 0.001 * i;
    }
    for (int q = 0; q < r.residual_slots; ++q)
      r.residual_max[static_cast<std::size_t>(q) * r.count + u] = 1e-12 * (q + 1) * (i + 1);
    r.force_max[u] = 2.5 + i;
    r.inconsistency_max[u] = 1e-15 * (i + 1);
    r.steps[u] = 100 + 7 * i;
    r.rejected[u] = i % 3;
  }
  for (std::size_t s = 0; s < r.traj_ids.size(); ++s) {
    for (int k = 0; k < r.samples; ++k) {
      const double t = times[static_cast<std::size_t>(k)];
      for (int j = 0; j < r.n; ++j) {
        const auto at = (s * static_cast<std::size_t>(r.samples) + static_cast<std::size_t>(k)) *
                            static_cast<std::size_t>(r.n) +
                        static_cast<std::size_t>(j);
        r.traj_q[at] = std::sin(t + j);
        r.traj_qd[at] = std::cos(t + j);
        r.traj_force[at] = 0.1 * j * t;
      }
      for (int q = 0; q < r.residual_slots; ++q)
        r.traj_residual[(s * static_cast<std::size_t>(r.samples) + static_cast<std::size_t>(k)) *
                            static_cast<std::size_t>(r.residual_slots) +
                        static_cast<std::size_t>(q)] = 1e-13 * (q + 1) * t;
    }
  }
  r.backend = "cpu";
  return r;
}

// Systems [begin, end) of `all`, with their trajectory ids made local (as the server's slices).
BatchResults slice(const BatchResults& all, int begin, int end) {
  BatchResults p;
  p.count = end - begin;
  p.n = all.n;
  p.residual_slots = all.residual_slots;
  p.samples = all.samples;
  const auto rows = [&](const std::vector<double>& src, std::vector<double>& dst, int width) {
    for (int r = 0; r < width; ++r)
      dst.insert(dst.end(), src.begin() + static_cast<std::ptrdiff_t>(r) * all.count + begin,
                 src.begin() + static_cast<std::ptrdiff_t>(r) * all.count + end);
  };
  rows(all.t, p.t, 1);
  rows(all.q, p.q, all.n);
  rows(all.qd, p.qd, all.n);
  rows(all.residual_max, p.residual_max, all.residual_slots);
  rows(all.force_max, p.force_max, 1);
  rows(all.inconsistency_max, p.inconsistency_max, 1);
  p.status.assign(all.status.begin() + begin, all.status.begin() + end);
  p.steps.assign(all.steps.begin() + begin, all.steps.begin() + end);
  p.rejected.assign(all.rejected.begin() + begin, all.rejected.begin() + end);
  p.traj_slot.assign(static_cast<std::size_t>(p.count), -1);
  const auto per_slot = static_cast<std::size_t>(all.samples);
  const auto copy_slot = [&](const std::vector<double>& src, std::vector<double>& dst, int width,
                             std::size_t slot) {
    const std::size_t len = per_slot * static_cast<std::size_t>(width);
    dst.insert(dst.end(), src.begin() + static_cast<std::ptrdiff_t>(slot * len),
               src.begin() + static_cast<std::ptrdiff_t>((slot + 1) * len));
  };
  for (std::size_t s = 0; s < all.traj_ids.size(); ++s) {
    const int id = all.traj_ids[s];
    if (id < begin || id >= end) continue;
    p.traj_slot[static_cast<std::size_t>(id - begin)] =
        static_cast<std::int32_t>(p.traj_ids.size());
    p.traj_ids.push_back(id - begin);
    copy_slot(all.traj_q, p.traj_q, all.n, s);
    copy_slot(all.traj_qd, p.traj_qd, all.n, s);
    copy_slot(all.traj_force, p.traj_force, all.n, s);
    copy_slot(all.traj_residual, p.traj_residual, all.residual_slots, s);
  }
  return p;
}

struct StreamCase {
  std::string name;
  std::string spec_json;
  bool summaries = true;
  std::size_t budget = 1024;  // chunk payload budget: small, so that streams have many chunks
  int parts = 2;              // slices of systems (the server's progress steps)
  v1::JobState end = v1::JOB_STATE_SUCCEEDED;
};

std::vector<v1::StreamJobResultsResponse> stream_of(const StreamCase& c) {
  const json doc = parse_spec_text(c.spec_json);
  ParseOptions options;
  options.gpu_available = true;
  const RunSpec spec = parse_run_spec(doc, options);
  std::vector<v1::StreamJobResultsResponse> chunks;
  const auto push = [&](v1::StreamJobResultsResponse chunk) {
    chunk.set_sequence(static_cast<std::int64_t>(chunks.size()) + 1);
    chunks.push_back(std::move(chunk));
  };
  {  // as service/server/job_runner.cpp publish_header writes it
    v1::StreamJobResultsResponse chunk;
    v1::JobHeader* h = chunk.mutable_header();
    h->set_job_id("j-0123456789abcdef");
    model_to_proto(*spec.model, h->mutable_model());
    h->set_spec_json(doc.dump());
    h->set_count(spec.batch.count);
    h->set_backend("cpu");
    h->set_precision(precision_name(spec.settings.precision));
    h->set_method(method_name(spec.settings.method));
    h->set_t0(spec.settings.t0);
    h->set_t_end(spec.settings.t_end);
    for (double t : sample_times(spec.settings)) h->add_sample_times(t);
    for (auto id : spec.output.trajectory_ids) h->add_trajectory_ids(id);
    const OutputSpec& o = spec.output;
    const std::pair<bool, const char*> fields[] = {
        {o.q, "q"}, {o.qd, "qd"}, {o.residual, "residual"}, {o.force, "force"}};
    for (const auto& [on, name] : fields)
      if (on) h->add_fields(name);
    h->set_residual_slots(spec.model->residual_slots());
    h->set_system_summaries(c.summaries);
    h->set_threads(2);
    push(std::move(chunk));
  }
  const BatchResults all = synthetic_results(spec);
  const int count = spec.batch.count;
  const bool stopped = c.end != v1::JOB_STATE_SUCCEEDED;
  const int parts = stopped ? 1 : c.parts;  // a stopped job ends after its first slice
  std::int64_t steps = 0;
  for (int k = 0; k < parts; ++k) {
    const int begin = count * k / c.parts, end = count * (k + 1) / c.parts;
    if (begin == end) continue;
    const BatchResults part = slice(all, begin, end);
    if (c.summaries)
      for (auto& s : summary_chunks(batch_slice(spec, begin, end - begin), part, begin, c.budget)) {
        v1::StreamJobResultsResponse chunk;
        *chunk.mutable_summaries() = std::move(s);
        push(std::move(chunk));
      }
    for (auto& t : trajectory_chunks(part, begin, spec.output, c.budget)) {
      v1::StreamJobResultsResponse chunk;
      *chunk.mutable_trajectory() = std::move(t);
      push(std::move(chunk));
    }
    for (auto s : part.steps) steps += s;
    v1::StreamJobResultsResponse progress;
    v1::Progress* p = progress.mutable_progress();
    p->set_systems_done(end);
    p->set_systems_total(count);
    p->set_steps_done(steps);
    p->set_elapsed_s(0.25 * (k + 1));
    p->set_system_steps_per_s(static_cast<double>(steps) / (0.25 * (k + 1)));
    p->set_eta_s(end == count ? 0.0 : 0.25);
    push(std::move(progress));
  }
  if (!stopped) {
    v1::StreamJobResultsResponse stats;
    statistics_to_proto(ensemble_statistics(all), stats.mutable_statistics());
    push(std::move(stats));
  }
  v1::StreamJobResultsResponse end;
  end.mutable_end()->set_state(c.end);
  if (stopped) end.mutable_end()->set_message("cancelled by the client");
  end.mutable_end()->set_elapsed_s(0.5);
  end.mutable_end()->set_steps_total(steps);
  push(std::move(end));
  return chunks;
}

int write_stream_seeds(const fs::path& corpus) {
  const fs::path to = corpus / "fuzz_result_assembler";
  clear(to, ".bin");
  const std::vector<StreamCase> cases = {
      {"duffing-systems-all", R"({"model": "duffing",
        "systems": [{}, {"params": {"k1": 9.5}}, {"q0": [1.1, 0.9], "qd0": [0, 0.1]}],
        "integrator": {"method": "rk4", "t_end": 0.5, "dt": 0.01},
        "output": {"samples": 5, "trajectories": "all"}})",
       true, 256, 2, v1::JOB_STATE_SUCCEEDED},
      {"scara-sweep-list", R"({"model": "scara", "params": {"m3": 0.9},
        "sweep": {"count": 6, "seed": 11, "sampler": "lhs",
                  "vary": {"params.m4": {"uniform": [0.3, 0.8]},
                           "q0[0]": {"normal": [0.5235987755982988, 0.01]}}},
        "assemble": true, "integrator": {"t_end": 0.3},
        "output": {"samples": 4, "trajectories": [4, 1], "fields": ["q", "residual"]}})",
       true, 1024, 3, v1::JOB_STATE_SUCCEEDED},
      {"pendulum-no-summaries", R"({"model": "pendulum_polar",
        "systems": [{}, {"params": {"L": 1.5}, "q0": [1.5, 0.3], "qd0": [0.0, 0.0]}],
        "integrator": {"method": "dopri5", "t_end": 1.0},
        "output": {"samples": 6, "trajectories": "all"}})",
       false, 4096, 1, v1::JOB_STATE_SUCCEEDED},
      {"four-bar-first", R"({"model": "four_bar", "sweep": {"count": 3, "sampler": "sobol",
        "vary": {"qd0[0]": {"values": [0.5, 1.0, 1.5]}}},
        "output": {"samples": 3, "trajectories": "first:1", "fields": ["qd", "force"]}})",
       true, 8192, 1, v1::JOB_STATE_SUCCEEDED},
      {"swarm-cancelled", R"({"model": "swarm", "sweep": {"count": 8, "seed": 3,
        "vary": {"params.mass": {"lognormal": [0.5, 0.1]}}},
        "output": {"samples": 2, "trajectories": "first:2"}})",
       true, 2048, 2, v1::JOB_STATE_CANCELLED},
      {"duffing-ensemble-only", R"({"model": "duffing", "sweep": {"count": 40, "seed": 7},
        "output": {"samples": 2}})",
       false, 1024, 2, v1::JOB_STATE_SUCCEEDED},
  };
  for (const StreamCase& c : cases) {
    const std::vector<v1::StreamJobResultsResponse> chunks = stream_of(c);
    ResultAssembler check;
    for (const auto& chunk : chunks) check.add(chunk);
    if (!check.finished()) throw std::runtime_error(c.name + ": the stream does not finish");
    write_file(to / (c.name + ".bin"), frame(chunks));
    // The same stream cut short after its header, and after half of its chunks (a client that
    // lost its stream).
    write_file(to / (c.name + "-header.bin"), frame({chunks.front()}));
    write_file(to / (c.name + "-half.bin"),
               frame({chunks.begin(),
                      chunks.begin() + static_cast<std::ptrdiff_t>((chunks.size() + 1) / 2)}));
  }
  // Headers that the assembler must refuse with std::runtime_error (each of them once crashed or
  // exhausted memory: see result_assembler.cpp), and a summary that overflowed int32 arithmetic.
  const auto header = [](const std::string& spec_json, std::int32_t count,
                         std::vector<std::int32_t> ids) {
    v1::StreamJobResultsResponse chunk;
    chunk.set_sequence(1);
    chunk.mutable_header()->set_spec_json(spec_json);
    chunk.mutable_header()->set_count(count);
    for (auto id : ids) chunk.mutable_header()->add_trajectory_ids(id);
    return chunk;
  };
  const std::vector<std::pair<std::string, std::vector<v1::StreamJobResultsResponse>>> refused = {
      {"refused-huge-count",
       {header(R"({"model": "duffing", "sweep": {"count": 2000000000}})", 2000000000, {})}},
      {"refused-huge-samples",
       {header(R"({"model": "duffing", "output": {"samples": 2000000000}})", 1,
               std::vector<std::int32_t>(64, 0))}},
      {"refused-trajectory-id-out-of-range", {header(R"({"model": "duffing"})", 1, {5})}},
  };
  int written = static_cast<int>(3 * cases.size());
  for (const auto& [name, chunks] : refused) {
    write_file(to / (name + ".bin"), frame(chunks));
    ++written;
  }
  std::vector<v1::StreamJobResultsResponse> overflow = {header(R"({"model": "duffing"})", 1, {})};
  overflow.emplace_back().set_sequence(2);
  overflow.back().mutable_summaries()->set_first_id(std::numeric_limits<std::int32_t>::max());
  overflow.back().mutable_summaries()->set_count(5);
  overflow.emplace_back().set_sequence(2);  // the summary was refused: 2 is still the next
  overflow.back().mutable_trajectory()->set_sample_begin(std::numeric_limits<std::int32_t>::max());
  overflow.back().mutable_trajectory()->set_sample_count(5);
  write_file(to / "refused-int32-overflow.bin", frame(overflow));
  return written + 1;
}

}  // namespace
}  // namespace ukes

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR   (e.g. tests/fuzz/corpus)\n", argv[0]);
    return 2;
  }
  try {
    const std::filesystem::path corpus = argv[1];
    const int typed = ukes::write_typed_seeds(corpus);
    const int streams = ukes::write_stream_seeds(corpus);
    std::printf("wrote %d fuzz_typed_spec and %d fuzz_result_assembler seeds under %s\n", typed,
                streams, argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_make_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
