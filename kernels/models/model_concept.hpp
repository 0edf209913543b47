// What a model is: a type with static metadata and __host__ __device__ functions templated on the
// scalar, so that every backend and every precision instantiates the same source.
//
// clang-format off
//   struct Example {
//     static constexpr const char* kName;           // catalogue name
//     static constexpr int kN;                      // coordinates q in R^n
//     static constexpr int kPositionRows;           // holonomic rows phi(q, t) = 0
//     static constexpr int kVelocityRows;           // nonholonomic / servo rows psi(q, qd, t) = 0
//     static constexpr bool kNonIdeal;              // prescribed force C (uk_solver.hpp)
//     static constexpr ParamSpec kParams[];         // names, defaults; order = index
//     static constexpr const char* kCoordinates[];  // coordinate names, order = q index
//     static constexpr double kTEnd;                // default end time
//     static constexpr Gains kGains;                // default Baumgarte gains
//     static constexpr const char* kSource;         // where the model comes from
//
//     template <class T>
//     static void mass(const Vec<T, kN>& q, T t, const T* p, Mat<T, kN, kN>& M);
//     template <class T>
//     static void force(const Vec<T, kN>& q, const Vec<T, kN>& qd, T t, const T* p,
//                       Vec<T, kN>& Q);
//     template <class S, class T>
//     static void position_rows(const Vec<S, kN>& q, S t, const T* p, S* phi);
//     template <class S, class T>
//     static void velocity_rows(const Vec<S, kN>& q, const Vec<S, kN>& qd, S t, const T* p,
//                               S* psi);
//     template <class T>
//     static void initial_state(const T* p, Vec<T, kN>& q, Vec<T, kN>& qd);
//     // only when kNonIdeal:
//     template <class T>
//     static void nonideal_force(const Vec<T, kN>& q, const Vec<T, kN>& qd, T t, const T* p,
//                                const Vec<T, kN>& Qc_ideal, Vec<T, kN>& C);
//   };
// clang-format on
//
// Constraint functions take S = an automatic-differentiation number (kernels/autodiff), so a model
// states its rows once, at the level physics gives them, and the second-order form A qdd = b is
// derived (kernels/uk/constraint_form.hpp). Parameters arrive as plain scalars T.
#pragma once

#include <concepts>

#include "kernels/linalg/small_matrix.hpp"

namespace ukes {

struct ParamSpec {
  const char* name;
  double value;
  bool structural = false;  // fixes a dimension: may not be overridden in this build
};

// Baumgarte gains: position rows follow phidd + alpha phid + beta phi = 0,
// velocity rows psid + alpha psi = 0.
struct Gains {
  double alpha = 0.0;
  double beta = 0.0;
};

template <class Model>
inline constexpr int kRows = Model::kPositionRows + Model::kVelocityRows;

// Residual slots reported per system: |phi| and |phid| per position row, |psi| per velocity row.
template <class Model>
inline constexpr int kResidualSlots = 2 * Model::kPositionRows + Model::kVelocityRows;

template <class Model>
inline constexpr int kParamCount = static_cast<int>(sizeof(Model::kParams) / sizeof(ParamSpec));

template <class M>
concept CatalogueModel = requires {
  { M::kName } -> std::convertible_to<const char*>;
  { M::kN } -> std::convertible_to<int>;
  { M::kPositionRows } -> std::convertible_to<int>;
  { M::kVelocityRows } -> std::convertible_to<int>;
  { M::kNonIdeal } -> std::convertible_to<bool>;
  { M::kTEnd } -> std::convertible_to<double>;
  { M::kGains } -> std::convertible_to<Gains>;
  { M::kSource } -> std::convertible_to<const char*>;
  M::kParams[0];
  M::kCoordinates[0];
};

}  // namespace ukes
