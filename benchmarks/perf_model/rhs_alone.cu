// One right-hand side alone, compiled for ptxas's resource report and never launched: what a
// model's evaluation needs in registers with nothing else live, the floor under any fused kernel
// that integrates it (benchmarks/perf_model/README.md, "What one right-hand side needs").
// kernel_resources.py gathers its rows with every other kernel's.
//
// Two variants per model: ptxas free to take 255 registers, and held to 168 by
// __launch_bounds__(128 threads, 3 blocks per SM) -- the budget that gives 12 resident warps per SM
// instead of 8, issue 14's target for the fused scara kernels.
#include "kernels/models/catalogue.hpp"
#include "kernels/uk/dynamics.hpp"

namespace ukes::perf_model {

// Thread i reads its q, qd from [j * count + i], the parameters from the first system (a constant
// pointer the compiler cannot see through), and writes what SystemKernel keeps of an evaluation.
template <class Model, class T>
__device__ void evaluate_one(const T* __restrict__ in, T* __restrict__ out, T t,
                             DynamicsSettings<T> s, int count) {
  constexpr int n = Model::kN, m = kRows<Model>, p = kParamCount<Model>;
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= count) return;
  T params[p > 0 ? p : 1];
  for (int k = 0; k < p; ++k) params[k] = in[k];
  Vec<T, n> q, qd;
  for (int j = 0; j < n; ++j) {
    q[j] = in[(p + j) * count + i];
    qd[j] = in[(p + n + j) * count + i];
  }
  const DynamicsEval<Model, T> e = evaluate_dynamics<Model, T>(Model{}, q, qd, t, params, s);
  for (int j = 0; j < n; ++j) {
    out[j * count + i] = e.qdd[j];
    out[(n + j) * count + i] = e.Qc[j];
  }
  for (int r = 0; r < m; ++r) out[(2 * n + r) * count + i] = e.form.value[r] + e.form.rate[r];
  out[(2 * n + m) * count + i] = e.inconsistency + e.rhs_norm + e.conditioning + T(e.mass_ok);
}

template <class Model, class T>
__global__ void __launch_bounds__(128) rhs_alone(const T* __restrict__ in, T* __restrict__ out, T t,
                                                 DynamicsSettings<T> s, int count) {
  evaluate_one<Model, T>(in, out, t, s, count);
}

template <class Model, class T>
__global__ void __launch_bounds__(128, 3)
    rhs_alone_168_registers(const T* __restrict__ in, T* __restrict__ out, T t,
                            DynamicsSettings<T> s, int count) {
  evaluate_one<Model, T>(in, out, t, s, count);
}

#define UKES_RHS_ALONE(name, Type)                                                         \
  template __global__ void rhs_alone<models::Type, double>(const double*, double*, double, \
                                                           DynamicsSettings<double>, int); \
  template __global__ void rhs_alone_168_registers<models::Type, double>(                  \
      const double*, double*, double, DynamicsSettings<double>, int);
UKES_CATALOGUE(UKES_RHS_ALONE)
#undef UKES_RHS_ALONE

}  // namespace ukes::perf_model
