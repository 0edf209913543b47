// The second-order constraint form A qdd = b of any model at one state, as plain arrays: what
// `ukes models validate` prints for a definition (derived by the kernels' own AD, so it shows
// exactly what a run will use).
#pragma once

#include <vector>

#include "kernels/models/model_info.hpp"

namespace ukes {

struct DerivedRows {
  int rows = 0;
  int n = 0;
  std::vector<double> A;      // rows x n, row-major
  std::vector<double> b;      // unstabilized
  std::vector<double> value;  // phi, psi
  std::vector<double> mass;   // n x n, row-major
  std::vector<double> force;  // Q
};

// At (q, qd, t) with parameters p (the model's sizes).
DerivedRows derived_rows(const ModelInfo& model, const std::vector<double>& q,
                         const std::vector<double>& qd, double t, const std::vector<double>& p);

}  // namespace ukes
