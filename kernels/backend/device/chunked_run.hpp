// Runs one model's batch on a device in chunks that fit in its memory, two chunks in flight:
// while the device integrates chunk c on one stream, the host scatters chunk c-1's results (copied
// out on the other stream into pinned buffers) into the caller's arrays. Only inputs, per-system
// results (one copy of the chunk's result arena, pipeline_buffers.hpp) and the requested
// trajectories cross PCIe.
//
// A chunk's arrays use the layouts of batch_layout.hpp with the chunk's own count as stride, so the
// kernels see an ordinary batch. When statistics are asked for, the per-system results the
// statistics read also stay on the device for the whole batch (strided copies into
// batch-sized arrays), and the statistics run there.
//
// Written once over the device API of device_api.hpp: CUDA in libukes_cuda.so, CPU threads in
// libukes_host_gpu.so (which CI runs as its GPU).
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kernels/backend/device/device_api.hpp"
#include "kernels/backend/device/device_context.hpp"
#include "kernels/backend/device/device_program.hpp"
#include "kernels/backend/device/pipeline_buffers.hpp"
#include "kernels/backend/device/staged_device_buffers.hpp"
#include "kernels/backend/device/system_kernels.hpp"
#include "kernels/backend/gpu/gpu_module_abi.hpp"
#include "kernels/backend/gpu/launch_policy.hpp"
#include "kernels/backend/thrust/statistics_input.hpp"
#include "kernels/ensemble/to_run_settings.hpp"

namespace ukes::device {

// Device bytes per system of the staged path's workspace (the warp path's too): per stage M and
// its factor, B, U, V and the singular values, plus the integrator's per-system state (stage
// derivatives, statistics).
template <class T>
std::size_t staged_bytes_per_system(int n, int m) {
  const std::size_t scalars =
      static_cast<std::size_t>(2 * n * n + 2 * m * n + m * m + n * n + 40 * n + 8 * m + 64);
  return scalars * sizeof(T) + 512;
}

inline constexpr int kPipelineDepth = 4;  // aim for at least this many chunks when large

template <class Api, class Model, class T>
class ChunkedRun {
  static_assert(DeviceApi<Api>);
  using Stream = typename Api::Stream;
  using Slot = PipelineSlot<Api>;

 public:
  ChunkedRun(const GpuRunRequest& request, GpuRunReport& report)
      : req_(request), report_(report), settings_(to_run_settings<T>(*request.settings)) {
    // Device code must never see the host's flag: it reads the device word that wait() raises.
    settings_.cancel = stop_word_.device_word();
    // The host arrays have the model's own widths (a bucket's padding lives only in the kernels).
    if constexpr (BucketModel<Model>) {
      const ModelShape shape = request.input.program->shape;
      shape_ = {shape.n, shape.residual_slots(), shape.params};
      program_ = std::make_unique<DeviceProgram<Api>>(*request.input.program);
    } else {
      shape_ = {Model::kN, kResidualSlots<Model>, kParamCount<Model>};
    }
    total_ = request.input.count;
    const EnsembleSettings& s = *request.settings;
    if (settings_.control.active) shape_.control_params = shape_.params;
    shape_.events = settings_.events.count;
    shape_.event_records = settings_.events.records;
    path_ = choose_gpu_path(s.gpu_path, Model::kN, kRows<Model>);
    // The controller's evaluation, the stiff method and events are the fused kernel's alone (the
    // run spec refuses asking for another path with any of them).
    if (settings_.control.active || settings_.method == Method::kRosenbrock || events())
      path_ = GpuPath::kFused;
    if (events()) {
      event_code_ = std::make_unique<DeviceCode<Api>>(settings_.events.program,
                                                      settings_.events.instruction_count,
                                                      settings_.events.constant_count);
      settings_.events.program = event_code_->view();
    }
    // User models run on the fused path alone: each bucket's warp and staged kernels would cost
    // several more minutes of ptxas per build (the run spec refuses asking for them).
    if constexpr (BucketModel<Model>) path_ = GpuPath::kFused;
    if constexpr (CompilesKernels<Api>) {
      if (BucketModel<Model> || compiled_at_run_time_only()) compile_fused();
    }
    report_.path = path_;
    report_.context_reused = context_.reused();
  }

  void run() {
    plan();
    if (req_.statistics) context_->resident.reserve(shape_, total_);
    if (path_ == GpuPath::kCusolver && !context_->solver)
      context_->solver = std::make_unique<typename Api::Solver>();
    if constexpr (!BucketModel<Model>) {
      if (path_ == GpuPath::kWarp)
        for (auto& buffers : warp_buffers_)
          buffers = std::make_unique<StagedDeviceBuffers<Api, Model, T>>(chunk_);
    }
    for (auto& slot : slots_) {
      slot.device.reserve(shape_, chunk_, trajectory_capacity_, settings_.samples);
      slot.host.reserve(shape_, chunk_, trajectory_capacity_, settings_.samples);
    }
    int next = 0;
    int c = 0;
    for (; next < total_ && !cancelled(); ++c) {
      Slot& slot = slots_[static_cast<std::size_t>(c % 2)];
      drain(slot);  // the chunk this slot held two chunks ago
      const int end = std::min(total_, next + chunk_);
      launch(slot, next, end);
      next = end;
    }
    for (int k = 0; k < 2; ++k) drain(slots_[static_cast<std::size_t>((c + k) % 2)]);
    if (req_.statistics && next == total_) {
      report_.statistics = Api::statistics(context_->resident.view(shape_, total_),
                                           slots_[0].stream, &report_.failed_ids);
    }
    context_.keep();  // every stream has drained: the next run may lease it
  }

 private:
  bool cancelled() const {
    const CancelFlag* cancel = req_.settings->cancel;
    return cancel != nullptr && cancel->requested();
  }

  // Waits for a slot's stream; meanwhile forwards a stop request to the kernels, whose systems
  // then end kCancelled within kStopPollInterval steps however long they are.
  void wait(const Stream& stream) {
    while (!stream.idle()) {
      if (cancelled()) stop_word_.raise();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  // Chunk size from the memory budget: two slots of per-system arrays (plus the staged path's
  // workspace: once for the cuSOLVER path, which runs one chunk at a time, per slot for the warp
  // path), the trajectories, and the resident summaries.
  void plan() {
    std::size_t budget = req_.memory_budget;
    if (budget == 0) budget = Api::free_memory() / 10 * 8;
    if (req_.statistics) {
      const std::size_t resident = ResidentSummaries<Api>::bytes_per_system(shape_) * total_;
      if (resident >= budget) throw std::runtime_error("the batch's results do not fit on the GPU");
      budget -= resident;
    }
    ChunkMemory memory;
    memory.total = total_;
    memory.trajectory_slots = req_.trajectory_slots;
    memory.host_per_system = 2 * (input_bytes_per_system(shape_) + result_bytes_per_system(shape_) +
                                  sizeof(std::int32_t));
    memory.device_per_system = memory.host_per_system;
    if (path_ == GpuPath::kCusolver)
      memory.device_per_system += staged_bytes_per_system<T>(Model::kN, kRows<Model>);
    if (path_ == GpuPath::kWarp)
      memory.device_per_system += 2 * staged_bytes_per_system<T>(Model::kN, kRows<Model>);
    memory.per_trajectory =
        2 * static_cast<std::size_t>(settings_.samples) * trajectory_bytes_per_sample(shape_);
    memory.device_budget = budget;
    memory.pinned_budget = req_.pinned_budget > 0 ? req_.pinned_budget : kDefaultPinnedBudget;
    const int granule = Api::kChunkGranule;
    const int wanted =
        std::max(Api::kMinChunkSystems, (total_ + kPipelineDepth - 1) / kPipelineDepth);
    const ChunkPlan plan = plan_chunks(memory, wanted - wanted % granule + granule, granule);
    chunk_ = std::min(plan.chunk, Api::chunk_limit());
    if (chunk_ <= 0) throw std::runtime_error("not enough GPU memory for one chunk of systems");
    trajectory_capacity_ = plan.trajectory_capacity;
    report_.chunk_systems = chunk_;
  }

  void launch(Slot& slot, int begin, int end) {
    const int count = end - begin;
    slot.begin = begin;
    slot.end = end;
    double* staging = slot.host.inputs.data();  // the packed layout of input_view
    for_each_input(
        [&](const FieldInfo& f, const double* batch) {
          const int rows = shape_(f.width);
          gather_rows(staging, batch, total_, begin, count, rows);
          staging += static_cast<std::size_t>(rows) * static_cast<std::size_t>(count);
        },
        req_.input);
    assign_trajectory_slots(slot, begin, end);

    Stream& stream = slot.stream;
    const auto c = static_cast<std::size_t>(count);
    const std::size_t input_bytes = c * input_bytes_per_system(shape_);
    Api::copy(slot.device.inputs.data(), slot.host.inputs.data(), input_bytes, stream);
    Api::copy(slot.device.slot.data(), slot.host.slot.data(), sizeof(std::int32_t) * c, stream);
    BatchInputView d_in = slot.device.input_view(shape_, count);
    if (program_) d_in.program = program_->get();
    const BatchOutputView d_out = slot.device.output_view(shape_, count);
    slot.kernel_start.record(stream);
    if (path_ == GpuPath::kFused) {
      switch (settings_.method) {
        case Method::kRk4:
          launch_fused<Method::kRk4>(stream, count, d_in, d_out);
          break;
        case Method::kDopri5:
          launch_fused<Method::kDopri5>(stream, count, d_in, d_out);
          break;
        case Method::kRosenbrock:
          launch_fused<Method::kRosenbrock>(stream, count, d_in, d_out);
          break;
      }
    } else if constexpr (!BucketModel<Model>) {
      if (path_ == GpuPath::kWarp) {
        const auto index = static_cast<std::size_t>(&slot - slots_.data());
        const StagedWorkspace<Model, T> ws = warp_buffers_[index]->view(count, nullptr);
        Api::launch_teams(stream, count, WarpSystem<Model, T>{ws, d_in, settings_, d_out});
      } else {
        Api::template run_staged<Model, T>(d_in, settings_, d_out, stream, *context_->solver,
                                           req_.settings->cancel);
      }
    }
    slot.kernel_stop.record(stream);
    if (req_.statistics) context_->resident.append(shape_, total_, begin, d_out, stream);
    copy_out(slot, count);
    ++report_.chunks;
  }

  // Whether the run needs the general fused kernel: with the step projection, control or events.
  bool general() const { return settings_.projection || settings_.control.active || events(); }
  bool events() const { return settings_.events.count > 0; }
  // Whether its controller differentiates servo rows of a higher relative degree
  // (kernels/uk/servo_derivatives.hpp): a kernel that an API which compiles kernels at run time
  // has only as compiled for the model (FusedSystem, system_kernels.hpp).
  bool servo_derivatives() const {
    return settings_.control.active && settings_.control.higher_degree_rows != 0;
  }
  // Whether the run's fused kernel exists only as compiled for the model at run time: servo
  // derivatives, the stiff method (kernels/ensemble/stiff_system.hpp), whose Jacobian by duals
  // would as well make every model's ahead-of-time build several times longer, and events.
  bool compiled_at_run_time_only() const {
    return servo_derivatives() || settings_.method == Method::kRosenbrock || events();
  }

  // The fused kernel of method kMethod; without the step projection's and the controller's code
  // and arrays when the run needs neither (a smaller frame: benchmarks/perf_model/README.md,
  // section 5).
  template <Method kMethod>
  void launch_fused(Stream& stream, int count, const BatchInputView& in,
                    const BatchOutputView& out) {
    if (events()) {
      launch_with_events<kMethod>(stream, count, in, out);
      return;
    }
    // The stiff method never follows servo derivatives (the run spec refuses the pair).
    if constexpr (kMethod != Method::kRosenbrock) {
      if (servo_derivatives()) {
        launch_fused(stream, count, FusedSystem<Model, T, kMethod, true, true>{in, settings_, out});
        return;
      }
    }
    if (general()) {
      launch_fused(stream, count, FusedSystem<Model, T, kMethod, true>{in, settings_, out});
    } else {
      launch_fused(stream, count, FusedSystem<Model, T, kMethod, false>{in, settings_, out});
    }
  }
  template <Method kMethod>
  void launch_with_events(Stream& stream, int count, const BatchInputView& in,
                          const BatchOutputView& out) {
    if constexpr (kMethod != Method::kRosenbrock) {
      if (servo_derivatives()) {
        launch_fused(stream, count,
                     FusedSystem<Model, T, kMethod, true, true, true>{in, settings_, out});
        return;
      }
    }
    launch_fused(stream, count,
                 FusedSystem<Model, T, kMethod, true, false, true>{in, settings_, out});
  }

  template <class Kernel>
  void launch_fused(Stream& stream, int count, const Kernel& kernel) {
    if constexpr (CompilesKernels<Api>) {
      if (compiled_) {
        Api::launch_compiled(stream, count, *compiled_, kernel);
        return;
      }
      // compile_fused threw when it got none: no ahead-of-time code to fall back on.
      if constexpr (Kernel::kCompiledAtRunTimeOnly) {
        throw std::logic_error(
            "no compiled kernel for servo derivatives, the stiff method or events");
      } else {
        Api::launch_systems(stream, count, kernel);
      }
    } else {
      Api::launch_systems(stream, count, kernel);
    }
  }

  // The fused kernel compiled for the model at run time (CompilesKernels, device_api.hpp), for
  // this run's method and options: a user model's (without one the bucket's interpreted kernel
  // runs; the report says which, and why), or any model's that exists only so
  // (compiled_at_run_time_only; without one the run fails, saying why).
  void compile_fused() {
    std::string why;
    const UserModelProgram* program = BucketModel<Model> ? req_.input.program : nullptr;
    const CancelFlag* cancel = req_.settings->cancel;
    const auto compile = [&]<Method kMethod>() {
      if constexpr (kMethod != Method::kRosenbrock) {
        if (servo_derivatives() && events())
          return Api::template compile<FusedSystem<Model, T, kMethod, true, true, true>>(
              program, cancel, &why);
        if (servo_derivatives())
          return Api::template compile<FusedSystem<Model, T, kMethod, true, true>>(program, cancel,
                                                                                   &why);
      }
      if (events())
        return Api::template compile<FusedSystem<Model, T, kMethod, true, false, true>>(
            program, cancel, &why);
      return general() ? Api::template compile<FusedSystem<Model, T, kMethod, true>>(program,
                                                                                     cancel, &why)
                       : Api::template compile<FusedSystem<Model, T, kMethod, false>>(program,
                                                                                      cancel, &why);
    };
    switch (settings_.method) {
      case Method::kRk4:
        compiled_ = compile.template operator()<Method::kRk4>();
        break;
      case Method::kDopri5:
        compiled_ = compile.template operator()<Method::kDopri5>();
        break;
      case Method::kRosenbrock:
        compiled_ = compile.template operator()<Method::kRosenbrock>();
        break;
    }
    if (compiled_) {
      report_.kernel = compiled_->description;
      return;
    }
    // A run cancelled while NVRTC worked launches nothing: run() checks before each chunk.
    if (cancel != nullptr && cancel->requested()) {
      report_.kernel = "none (cancelled while compiling)";
    } else if (compiled_at_run_time_only()) {
      throw std::runtime_error(
          std::string(servo_derivatives() ? "servo rows of a higher relative degree"
                      : settings_.method == Method::kRosenbrock ? "the rosenbrock method"
                                                                : "events") +
          " runs on this GPU only in a kernel compiled for the model at run time, and there is "
          "none: " +
          why);
    } else {
      report_.kernel = "the interpreter of bucket " + std::to_string(Model::kN) +
                       " (no compiled kernel: " + why + ")";
    }
  }

  // Chunk-local trajectory slots, numbered in system order; slot_of maps them back.
  void assign_trajectory_slots(Slot& slot, int begin, int end) {
    slot.slot_of.clear();
    std::int32_t* local = slot.host.slot.data();
    for (int i = begin; i < end; ++i) {
      const std::int32_t global = req_.output.traj_slot ? req_.output.traj_slot[i] : -1;
      if (global >= 0) {
        local[i - begin] = static_cast<std::int32_t>(slot.slot_of.size());
        slot.slot_of.push_back(global);
      } else {
        local[i - begin] = -1;
      }
    }
    if (static_cast<int>(slot.slot_of.size()) > trajectory_capacity_)
      throw std::logic_error("chunk records more trajectories than planned");
  }

  void copy_out(Slot& slot, int count) {
    auto copy = [&](auto* dst, const auto* src, std::size_t elements) {
      if (elements == 0) return;
      Api::copy(dst, src, sizeof(*src) * elements, slot.stream);
    };
    copy(slot.host.results.data(), slot.device.results.data(), results_arena_bytes(shape_, count));
    const std::size_t per = slot.slot_of.size() * static_cast<std::size_t>(settings_.samples);
    for_each_trajectory(
        [&](const FieldInfo& f, auto& host, const auto& device) {
          copy(host.data(), device.data(), per * shape_(f.width));
        },
        slot.host, slot.device);
  }

  // Waits for the slot's chunk, moves its results into the caller's arrays and reports them.
  void drain(Slot& slot) {
    if (slot.begin == slot.end) return;
    wait(slot.stream);
    report_.kernel_s += 1e-3 * Api::elapsed_ms(slot.kernel_start, slot.kernel_stop);
    const int count = slot.end - slot.begin;
    copy_results(req_.output, slot.begin, slot.host.output_view(shape_, count), 0, count, shape_);
    scatter_trajectories(slot);
    slot.begin = slot.end = 0;
  }

  void scatter_trajectories(const Slot& slot) {
    const std::size_t k = static_cast<std::size_t>(settings_.samples);
    for (std::size_t local = 0; local < slot.slot_of.size(); ++local) {
      const auto global = static_cast<std::size_t>(slot.slot_of[local]);
      for_each_trajectory(
          [&](const FieldInfo& f, double* out, const auto& chunk) {
            const std::size_t block = k * static_cast<std::size_t>(shape_(f.width));
            if (block > 0)
              std::memcpy(out + global * block, chunk.data() + local * block,
                          sizeof(double) * block);
          },
          req_.output, slot.host);
    }
  }

  const GpuRunRequest& req_;
  GpuRunReport& report_;
  typename Api::StopWord stop_word_;  // before settings_, which points into it
  RunSettings<T> settings_;
  RecordShape shape_;
  int total_ = 0;
  int chunk_ = 0;
  int trajectory_capacity_ = 0;
  GpuPath path_ = GpuPath::kFused;
  std::unique_ptr<DeviceProgram<Api>> program_;            // a user model's, for the whole run
  std::unique_ptr<DeviceCode<Api>> event_code_;            // the event program's, likewise
  std::shared_ptr<const CompiledKernelOf<Api>> compiled_;  // see compile_fused
  ContextLease<Api> context_{req_.device};  // slots, resident summaries, solver handle
  std::array<Slot, 2>& slots_ = context_->slots;
  // The warp path's workspace, one per slot: two of its chunks are in flight at once.
  std::array<std::unique_ptr<StagedDeviceBuffers<Api, Model, T>>, 2> warp_buffers_;
};

// Runs request.input on the device in request.settings' precision. Throws on any device error.
template <class Api, class Model>
void run_model(const GpuRunRequest& request, GpuRunReport& report) {
  if (request.settings->precision == Precision::kFp64) {
    ChunkedRun<Api, Model, double>(request, report).run();
  } else {
    ChunkedRun<Api, Model, float>(request, report).run();
  }
}

}  // namespace ukes::device
