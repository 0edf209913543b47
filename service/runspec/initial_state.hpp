// Host helpers around a model's default initial condition (Model::initial_state), which may depend
// on the parameters.
#pragma once

#include <vector>

#include "kernels/ensemble/ensemble.hpp"
#include "kernels/models/model_info.hpp"

namespace ukes {

// The default initial condition of every system of `batch` at that system's parameters, in the
// batch layout ([coordinate][count]). False when the model is not in the catalogue.
bool default_initial_states(const Batch& batch, std::vector<double>& q0, std::vector<double>& qd0);

}  // namespace ukes
