#include "service/runspec/initial_state.hpp"

#include "kernels/models/dispatch.hpp"

namespace ukes {

namespace {

template <class M>
void initial_states_of(const M& model, int params, const Batch& batch, std::vector<double>& q0,
                       std::vector<double>& qd0) {
  const auto count = static_cast<std::size_t>(batch.count);
  const int n = batch.model->n;
  q0.assign(count * n, 0.0);
  qd0.assign(count * n, 0.0);
  double p[kParamCount<M> > 0 ? kParamCount<M> : 1] = {};
  for (std::size_t i = 0; i < count; ++i) {
    for (int k = 0; k < params; ++k) p[k] = batch.params[k * count + i];
    Vec<double, M::kN> q, qd;
    model.initial_state(p, q, qd);
    for (int j = 0; j < n; ++j) {
      q0[j * count + i] = q[j];
      qd0[j * count + i] = qd[j];
    }
  }
}

}  // namespace

bool default_initial_states(const Batch& batch, std::vector<double>& q0, std::vector<double>& qd0) {
  const int params = static_cast<int>(batch.model->params.size());
  const auto run = [&]<class M>() {
    initial_states_of(model_for<M>(batch.view()), params, batch, q0, qd0);
  };
  return dispatch_model_of(*batch.model, run);
}

}  // namespace ukes
