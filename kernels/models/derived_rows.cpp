#include "kernels/models/derived_rows.hpp"

#include <stdexcept>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/models/dispatch.hpp"
#include "kernels/uk/constraint_form.hpp"

namespace ukes {

namespace {

template <class M>
DerivedRows derive(const M& model, const ModelInfo& info, const std::vector<double>& q0,
                   const std::vector<double>& qd0, double t, const std::vector<double>& p0) {
  const ModelShape shape = model_shape(model);
  Vec<double, M::kN> q = Vec<double, M::kN>::zero(), qd = Vec<double, M::kN>::zero();
  for (int j = 0; j < shape.n; ++j) {
    q[j] = q0[j];
    qd[j] = qd0[j];
  }
  double p[kParamCount<M> > 0 ? kParamCount<M> : 1] = {};
  for (int k = 0; k < shape.params; ++k) p[k] = p0[k];
  derive_parameters(model, p);
  const ConstraintForm<M, double> f = constraint_form<M, double>(model, q, qd, t, p);
  Mat<double, M::kN, M::kN> mass = Mat<double, M::kN, M::kN>::zero();
  Vec<double, M::kN> force = Vec<double, M::kN>::zero();
  model.mass(q, t, p, mass);
  model.force(q, qd, t, p, force);
  DerivedRows d;
  d.rows = info.rows();
  d.n = shape.n;
  for (int r = 0; r < d.rows; ++r) {
    for (int j = 0; j < d.n; ++j) d.A.push_back(f.A(r, j));
    d.b.push_back(f.b[r]);
    d.value.push_back(f.value[r]);
  }
  for (int i = 0; i < d.n; ++i) {
    for (int j = 0; j < d.n; ++j) d.mass.push_back(mass(i, j));
    d.force.push_back(force[i]);
  }
  return d;
}

}  // namespace

DerivedRows derived_rows(const ModelInfo& model, const std::vector<double>& q,
                         const std::vector<double>& qd, double t, const std::vector<double>& p) {
  if (static_cast<int>(q.size()) != model.n || static_cast<int>(qd.size()) != model.n ||
      p.size() != model.params.size())
    throw std::invalid_argument("derived_rows: sizes do not match the model");
  DerivedRows d;
  BatchInputView in;
  in.count = 1;
  in.program = program_of(model);
  const auto run = [&]<class M>() { d = derive(model_for<M>(in), model, q, qd, t, p); };
  const bool found = dispatch_model_of(model, run);
  if (!found) throw std::invalid_argument("unknown model: " + model.name);
  return d;
}

}  // namespace ukes
