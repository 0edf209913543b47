// The built-in model catalogue (docs/MODELS.md order) and compile-time dispatch over it.
#pragma once

#include <string_view>

#include "kernels/models/chaplygin_sleigh.hpp"
#include "kernels/models/duffing.hpp"
#include "kernels/models/ellipse_particle.hpp"
#include "kernels/models/flexible_joint.hpp"
#include "kernels/models/four_bar.hpp"
#include "kernels/models/friction_ring.hpp"
#include "kernels/models/moving_support_pendulum.hpp"
#include "kernels/models/pendulum_polar.hpp"
#include "kernels/models/pfaffian_particle.hpp"
#include "kernels/models/projectile_polar.hpp"
#include "kernels/models/scara.hpp"
#include "kernels/models/slider_crank.hpp"
#include "kernels/models/spiral.hpp"
#include "kernels/models/swarm.hpp"
#include "kernels/models/two_rod_pendulum.hpp"

namespace ukes {

template <class... Ms>
struct ModelList {
  static constexpr int size = sizeof...(Ms);
};

using Catalogue = ModelList<models::Spiral, models::Swarm, models::FlexibleJoint, models::Duffing,
                            models::TwoRodPendulum, models::Scara, models::PendulumPolar,
                            models::SliderCrank, models::FourBar, models::ChaplyginSleigh,
                            models::FrictionRing, models::ProjectilePolar, models::PfaffianParticle,
                            models::MovingSupportPendulum, models::EllipseParticle>;

// Calls f.template operator()<Model>() for every catalogue model, in catalogue order.
template <class F, class... Ms>
void for_each_model(ModelList<Ms...>, F&& f) {
  (f.template operator()<Ms>(), ...);
}
template <class F>
void for_each_model(F&& f) {
  for_each_model(Catalogue{}, static_cast<F&&>(f));
}

// Calls f.template operator()<Model>() for the model named `name`; false when there is none.
template <class F>
bool dispatch_model(std::string_view name, F&& f) {
  bool found = false;
  for_each_model([&]<class M>() {
    if (!found && name == M::kName) {
      found = true;
      f.template operator()<M>();
    }
  });
  return found;
}

}  // namespace ukes
