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

// The catalogue, in docs/MODELS.md order: X(header under kernels/models/, type in models::).
// The one list of built-in models: CMakeLists.txt reads it to generate one backend translation
// unit per model (keep one entry per line, as below).
// clang-format off
#define UKES_CATALOGUE(X) \
  X(spiral, Spiral) \
  X(swarm, Swarm) \
  X(flexible_joint, FlexibleJoint) \
  X(duffing, Duffing) \
  X(two_rod_pendulum, TwoRodPendulum) \
  X(scara, Scara) \
  X(pendulum_polar, PendulumPolar) \
  X(slider_crank, SliderCrank) \
  X(four_bar, FourBar) \
  X(chaplygin_sleigh, ChaplyginSleigh) \
  X(friction_ring, FrictionRing) \
  X(projectile_polar, ProjectilePolar) \
  X(pfaffian_particle, PfaffianParticle) \
  X(moving_support_pendulum, MovingSupportPendulum) \
  X(ellipse_particle, EllipseParticle)
// clang-format on

template <class First, class... Rest>
using DropFirst = ModelList<Rest...>;
#define UKES_CATALOGUE_TYPE(header, type) , models::type
using Catalogue = DropFirst<void UKES_CATALOGUE(UKES_CATALOGUE_TYPE)>;
#undef UKES_CATALOGUE_TYPE

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
