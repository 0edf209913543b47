// `ukes run`: parse and validate a spec, run it in-process (or hand it to a server), print a
// summary, write the files.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

#include "client/commands.hpp"
#include "client/remote.hpp"
#include "client/summary.hpp"
#include "kernels/backend/gpu/gpu_backend.hpp"
#include "service/engine/engine.hpp"
#include "service/protocol/result_chunks.hpp"
#include "service/results/atomic_file.hpp"
#include "service/runspec/model_source.hpp"
#include "service/runspec/run_spec.hpp"
#include "service/runspec/spec_text.hpp"

namespace ukes::cli {

namespace {

// Spec files larger than this are refused (`ukes run /dev/zero` once read without end).
constexpr std::size_t kMaxSpecBytes = std::size_t{64} << 20;

// Reads `in` to its end, or fails past kMaxSpecBytes.
bool read_bounded(std::istream& in, const std::string& what, std::string& text,
                  std::string& error) {
  text.clear();
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxSpecBytes) {
      error = what + " is larger than " + std::to_string(kMaxSpecBytes >> 20) + " MiB";
      return false;
    }
  }
  if (in.bad()) {
    error = "cannot read " + what;
    return false;
  }
  return true;
}

bool read_text(const std::string& path, std::string& text, std::string& error) {
  if (path == "-") return read_bounded(std::cin, "standard input", text, error);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read spec file '" + path + "'";
    return false;
  }
  return read_bounded(in, "spec file '" + path + "'", text, error);
}

// Replaces sweep.count in the document; a usage error when the spec has no sweep to resize.
int apply_count(nlohmann::json& doc, std::int64_t count) {
  if (!doc.is_object() || !doc.contains("sweep") || !doc["sweep"].is_object()) {
    std::fprintf(stderr, "ukes: --count: the spec has no sweep whose count it could set\n");
    return kExitUsage;
  }
  doc["sweep"]["count"] = count;
  return kExitOk;
}

// Sets the document's device_ids from --devices' "0,2"; a usage error naming the option when the
// list is not one of GPU ordinals (the spec's parse checks them against this machine's GPUs).
int apply_devices(nlohmann::json& doc, const std::string& devices) {
  nlohmann::json ids = nlohmann::json::array();
  std::size_t at = 0;
  while (at <= devices.size()) {
    const std::size_t comma = std::min(devices.find(',', at), devices.size());
    const std::string item = devices.substr(at, comma - at);
    if (item.empty() || item.size() > 2 || item.find_first_not_of("0123456789") != item.npos) {
      std::fprintf(stderr, "ukes: --devices: give GPU ordinals separated by commas, e.g. 0,2\n");
      return kExitUsage;
    }
    ids.push_back(std::stoi(item));
    at = comma + 1;
  }
  if (doc.is_object()) doc["device_ids"] = std::move(ids);  // else the spec's parse says why
  return kExitOk;
}

// A spec's `model` may name a definition file (docs/MODEL_FORMAT.md), relative to the spec's
// folder: the definition replaces the path, so the spec (and every result file that records it)
// holds the model itself. Names of catalogue models and model ids are left as they are.
int inline_model_file(std::string& text, const std::string& spec_path) {
  nlohmann::json doc;
  try {
    doc = parse_spec_text(text);
  } catch (const SpecError&) {
    return kExitOk;  // parse_run_spec reports it
  }
  if (!doc.is_object() || !doc.contains("model") || !doc["model"].is_string()) return kExitOk;
  const std::string model = doc["model"].get<std::string>();
  const bool looks_like_path =
      model.find('/') != std::string::npos ||
      (model.size() > 5 && model.compare(model.size() - 5, 5, ".json") == 0);
  if (!looks_like_path || is_model_id(model)) return kExitOk;
  std::filesystem::path file(model);
  if (file.is_relative() && spec_path != "-")
    file = std::filesystem::path(spec_path).parent_path() / file;
  std::string definition;
  if (const int rc = read_definition_file(file.string(), definition); rc != kExitOk) return rc;
  try {
    doc["model"] = parse_spec_text(definition);
  } catch (const SpecError& e) {
    std::fprintf(stderr, "ukes: spec error: model file '%s': %s\n", file.string().c_str(),
                 e.what());
    return kExitUsage;
  }
  text = doc.dump();
  return kExitOk;
}

void note_no_trajectories(const RunSpec& spec, const std::string& h5) {
  if (!h5.empty() && spec.output.trajectory_ids.empty())
    std::fprintf(stderr,
                 "ukes: note: output.trajectories records no system: %s will hold no "
                 "trajectories\n",
                 h5.c_str());
}

// Seconds a run goes without progress lines when standard error is not a terminal.
constexpr double kQuietProgressS = 2.0;

}  // namespace

int spec_errors_as_usage(const std::function<void()>& parse) {
  try {
    parse();
  } catch (const LimitError& e) {
    std::fprintf(stderr, "ukes: limit exceeded: %s\n", e.what());
    return kExitUsage;
  } catch (const SpecError& e) {
    std::fprintf(stderr, "ukes: spec error: %s\n", e.what());
    return kExitUsage;
  }
  return kExitOk;
}

int check_result_files(const ResultFiles& files) {
  if (!files.out.empty() && files.out == files.h5) {
    std::fprintf(stderr, "ukes: --out and --h5 name the same file '%s'\n", files.out.c_str());
    return kExitUsage;
  }
  try {
    if (!files.out.empty()) check_writable(files.out);
    if (!files.h5.empty()) check_writable(files.h5);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ukes: %s\n", e.what());
    return kExitFailure;
  }
  return kExitOk;
}

// An in-process run may use this machine's GPU; a spec that asks for the CPU does not load the
// CUDA module at all (a few hundred milliseconds).
ParseOptions local_parse_options(const nlohmann::json& doc) {
  ParseOptions o;
  const auto device = doc.find("device");
  if (doc.is_object() && device != doc.end() && *device == "cpu") return o;
  const GpuAvailability gpu = gpu_availability();
  o.gpu_available = gpu.available;
  o.gpu_unavailable_reason = gpu.reason;
  o.gpu_devices = gpu.info.device_count;
  return o;
}

int load_spec_text(const std::string& path, std::int64_t count, std::string& text,
                   const std::string& devices) {
  std::string error;
  if (!read_text(path, text, error)) {
    std::fprintf(stderr, "ukes: %s\n", error.c_str());
    return kExitUsage;
  }
  if (count > 0 || !devices.empty()) {  // the options' changes, in one parse of the document
    nlohmann::json doc;
    if (const int rc = spec_errors_as_usage([&] { doc = parse_spec_text(text); }); rc != kExitOk)
      return rc;
    if (count > 0) {
      if (const int rc = apply_count(doc, count); rc != kExitOk) return rc;
    }
    if (!devices.empty()) {
      if (const int rc = apply_devices(doc, devices); rc != kExitOk) return rc;
    }
    text = doc.dump();
  }
  return inline_model_file(text, path);
}

int run_command(const RunOptions& options) {
  if (!options.server.empty()) return run_on_server(options);
  if (options.shards > 0) {
    std::fprintf(stderr, "ukes: --shards needs --server (an in-process run uses every thread)\n");
    return kExitUsage;
  }
  if (launched_by_mpi()) return run_as_mpi_rank(options);
  const ResultFiles files{options.out, options.h5};
  if (!files.out.empty() && files.out == files.h5) return check_result_files(files);  // usage

  std::string text;
  if (const int rc = load_spec_text(options.spec, options.count, text, options.devices);
      rc != kExitOk)
    return rc;
  RunSpec spec;
  if (const int rc = spec_errors_as_usage([&] {
        const nlohmann::json doc = parse_spec_text(text);
        spec = parse_run_spec(doc, local_parse_options(doc));
      });
      rc != kExitOk)
    return rc;

  note_no_trajectories(spec, options.h5);
  if (spec.device == Device::kAuto && spec.device_resolved == Device::kCpu)
    std::fprintf(stderr, "ukes: running on the CPU: %s\n", spec.cpu_reason.c_str());
  if (const int rc = check_result_files(files); rc != kExitOk) return rc;
  try {
    ExecuteOptions exec;
    exec.threads = options.threads;
    // Nothing bounds an in-process run's memory but the machine: one GPU's slice sizes on each.
    if (spec.device_resolved == Device::kGpu)
      exec.slice_bytes *= std::max<std::int64_t>(
          1, static_cast<std::int64_t>(spec.device_ids.empty() ? usable_gpu_devices().size()
                                                               : spec.device_ids.size()));
    // Progress as a server run shows it: a bar on a terminal; elsewhere (logs, pipes) a line
    // every few seconds once the run has taken more than that.
    ProgressBar bar(isatty(STDERR_FILENO) != 0);
    exec.on_slice = [&](const SliceDone& slice) {
      if (isatty(STDERR_FILENO) == 0 && slice.elapsed_s < kQuietProgressS) return;
      bar.show(progress_after(slice, spec.batch.count));
    };
    const RunOutcome out = execute(spec, exec);
    bar.clear();
    if (!out.fallback_reason.empty() && out.fallback_from == 0)
      std::fprintf(stderr, "ukes: running on the CPU: %s\n", out.fallback_reason.c_str());
    else if (!out.fallback_reason.empty())
      std::fprintf(stderr, "ukes: systems from %d on ran on the CPU: %s\n", out.fallback_from,
                   out.fallback_reason.c_str());
    if (!out.gpu_loss.empty()) std::fprintf(stderr, "ukes: %s\n", out.gpu_loss.c_str());
    if (!out.gpu_kernel.empty())
      std::fprintf(stderr, "ukes: GPU kernel: %s\n", out.gpu_kernel.c_str());
    write_result_files(files, spec, out);
    print_summary(spec, out, total_steps(out.results));
    print_written(files, out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ukes: %s\n", e.what());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace ukes::cli
