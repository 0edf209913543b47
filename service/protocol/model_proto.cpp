#include "service/protocol/model_proto.hpp"

#include "kernels/models/user/compiled_model.hpp"

namespace ukes {

void model_to_proto(const ModelInfo& m, v1::Model* out) {
  out->set_name(m.name);
  out->set_source(m.source);
  out->set_n(m.n);
  out->set_position_rows(m.position_rows);
  out->set_velocity_rows(m.velocity_rows);
  out->set_nonideal(m.nonideal);
  for (const auto& c : m.coordinates) out->add_coordinates(c);
  for (const auto& p : m.params) {
    v1::Parameter* param = out->add_params();
    param->set_name(p.name);
    param->set_default_value(p.value);
    param->set_structural(p.structural);
  }
  out->set_t_end(m.t_end);
  out->set_alpha(m.gains.alpha);
  out->set_beta(m.gains.beta);
  for (double v : m.q0) out->add_q0(v);
  for (double v : m.qd0) out->add_qd0(v);
  if (m.user) {
    out->set_id(m.user->definition.content_id);
    out->set_definition_json(m.user->definition.canonical_json);
  }
}

}  // namespace ukes
