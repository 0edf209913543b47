// The small device API the GPU module's host code is written over (chunked_run.hpp,
// staged_device_buffers.hpp, device_program.hpp). Two implementations:
//   CudaApi  (kernels/backend/cuda/cuda_api.cuh): the CUDA runtime and cuSOLVER, in
//   libukes_cuda.so; HostApi  (kernels/backend/host_gpu/host_api.hpp): CPU threads, in
//   libukes_host_gpu.so, which
//            exports the same module ABI so that CI loads it as "the GPU" and runs every line of
//            the pipeline, the kernels' loops and the staged path without a device.
//
// An API provides, as static members and nested types:
//   template <class T> DeviceBuffer, PinnedBuffer  owning, move-only: resize(n) (contents not
//                                     kept), data(), size()
//   Stream    in-order queue of work: idle() (throws a failure of queued work), synchronize()
//   Event     record(stream); elapsed_ms(start, stop) once both have run
//   StopWord  one word the kernels poll (RunSettings::cancel): raise() from the host while it
//             waits, device_word() for the kernels
//   Solver    the staged path's library handle (cuSOLVER's on a GPU)
//   copy(dst, src, bytes, stream)             asynchronous, any direction (unified addressing)
//   copy_2d(dst, dpitch, src, spitch, width_bytes, rows, stream)
//   copy_now(dst, src, bytes)                 synchronous host -> device
//   free_memory()                             bytes the device has free now
//   set_device(device)                        the module's device the calling thread works on
//                                             (GpuRunRequest::device) from now on
//   launch_systems(stream, count, kernel)     kernel(i) for i in [0, count), one thread each
//   launch_teams(stream, count, kernel)       kernel(team, i) with a team of kWarpSize lanes each
//   run_staged<Model, T>(in, settings, out, stream, solver, cancel)   the staged path, blocking
//   statistics(ThrustStatisticsInput, stream, failed_ids)            after the queued work
// and, where the API can compile kernels at run time (CUDA's, through NVRTC; CompilesKernels):
//   CompiledKernel                            a kernel compiled for one model
//   compile<Kernel>(program, cancel, &why)    shared_ptr to it, or null with the reason (a
//                                             cancelled run stops waiting for the compiler);
//                                             program: a user model's, null for a built-in
//   launch_compiled(stream, count, compiled, kernel)   as launch_systems, on the compiled kernel
// Every failure throws std::runtime_error naming the call.
#pragma once

#include <concepts>
#include <cstddef>

namespace ukes {

template <class Api>
concept DeviceApi = requires(typename Api::Stream& stream, void* dst, const void* src,
                             std::size_t bytes) {
  typename Api::Event;
  typename Api::StopWord;
  typename Api::Solver;
  typename Api::template DeviceBuffer<double>;
  typename Api::template PinnedBuffer<double>;
  { stream.idle() } -> std::same_as<bool>;
  Api::copy(dst, src, bytes, stream);
  Api::copy_2d(dst, bytes, src, bytes, bytes, bytes, stream);
  Api::copy_now(dst, src, bytes);
  { Api::free_memory() } -> std::same_as<std::size_t>;
  Api::set_device(0);
};

// Whether Api compiles kernels for one user model at run time (see above).
template <class Api>
concept CompilesKernels = requires {
  typename Api::CompiledKernel;
};

// Api::CompiledKernel where there is one, else void.
template <class Api>
struct CompiledKernelType {
  using type = void;
};
template <CompilesKernels Api>
struct CompiledKernelType<Api> {
  using type = typename Api::CompiledKernel;
};
template <class Api>
using CompiledKernelOf = typename CompiledKernelType<Api>::type;

}  // namespace ukes
