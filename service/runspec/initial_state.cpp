#include "service/runspec/initial_state.hpp"

#include "kernels/models/catalogue.hpp"

namespace ukes {

bool default_initial_states(const Batch& batch, std::vector<double>& q0, std::vector<double>& qd0) {
  const auto count = static_cast<std::size_t>(batch.count);
  return dispatch_model(batch.model->name, [&]<class M>() {
    constexpr int kP = kParamCount<M>;
    q0.assign(count * M::kN, 0.0);
    qd0.assign(count * M::kN, 0.0);
    double p[kP > 0 ? kP : 1] = {};
    for (std::size_t i = 0; i < count; ++i) {
      for (int k = 0; k < kP; ++k) p[k] = batch.params[k * count + i];
      Vec<double, M::kN> q, qd;
      M::initial_state(p, q, qd);
      for (int j = 0; j < M::kN; ++j) {
        q0[j * count + i] = q[j];
        qd0[j * count + i] = qd[j];
      }
    }
  });
}

}  // namespace ukes
