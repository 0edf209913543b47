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
//     template <class S, class T>
//     static void mass(const Vec<S, kN>& q, S t, const T* p, Mat<S, kN, kN>& M);
//     template <class S, class T>
//     static void force(const Vec<S, kN>& q, const Vec<S, kN>& qd, S t, const T* p,
//                       Vec<S, kN>& Q);
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
// derived (kernels/uk/constraint_form.hpp). Mass and force take S = T or a Taylor series, which
// the controller of servo rows of a higher relative degree differentiates along its motion
// (kernels/uk/servo_derivatives.hpp). Parameters arrive as plain scalars T.
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

// A model defined at run time and interpreted (kernels/models/user/user_model.hpp) is a value: one
// type per size bucket holds any model up to the bucket's capacities, with its own sizes below
// them. The kernels size their arrays by the capacities below and stop their loops at the sizes a
// model instance reports (model_shape). A built-in model's sizes are its compile-time constants,
// and so are those of a user model's kernel compiled for it (not a bucket model).
template <class Model>
concept BucketModel = requires {
  Model::kRowCapacity;
};

// Storage for constraint rows (position rows first, then velocity rows).
template <class Model>
inline constexpr int kRows = [] {
  if constexpr (BucketModel<Model>) {
    return Model::kRowCapacity;
  } else {
    return Model::kPositionRows + Model::kVelocityRows;
  }
}();

// Storage for each level's rows: a bucket's rows may be all of one level.
template <class Model>
inline constexpr int kPositionCapacity = [] {
  if constexpr (BucketModel<Model>) {
    return kRows<Model>;
  } else {
    return Model::kPositionRows;
  }
}();
template <class Model>
inline constexpr int kVelocityCapacity = [] {
  if constexpr (BucketModel<Model>) {
    return kRows<Model>;
  } else {
    return Model::kVelocityRows;
  }
}();

// Residual slots reported per system: |phi| and |phid| per position row, |psi| per velocity row.
template <class Model>
inline constexpr int kResidualSlots = kPositionCapacity<Model> + kRows<Model>;

template <class Model>
inline constexpr int kParamCount = [] {
  if constexpr (requires { Model::kParamCapacity; }) {
    return Model::kParamCapacity;
  } else if constexpr (requires { Model::kParams; }) {
    return static_cast<int>(sizeof(Model::kParams) / sizeof(ParamSpec));
  } else {
    return 0;  // a test model that needs no parameters
  }
}();

// The sizes of one model instance.
struct ModelShape {
  int n;
  int position_rows;
  int velocity_rows;
  int params;
  UKES_HD int rows() const { return position_rows + velocity_rows; }
  UKES_HD int residual_slots() const { return 2 * position_rows + velocity_rows; }
};

// A user model says its own sizes, compiled for it or not: its parameter count is the model's own
// parameters, which a batch holds, while kParamCount also counts the slots derive_parameters fills
// (a system's storage). A built-in's are its constants.
template <class Model>
UKES_HD UKES_INLINE ModelShape model_shape(const Model& model) {
  if constexpr (requires { model.shape(); }) {
    return model.shape();
  } else {
    (void)model;
    return {Model::kN, Model::kPositionRows, Model::kVelocityRows, kParamCount<Model>};
  }
}

// Whether the model prescribes a non-ideal constraint force: known at compile time for a built-in;
// a bucket type may (kNonIdeal) and its instance says whether it does.
template <class Model>
UKES_HD UKES_INLINE bool has_nonideal_force(const Model& model) {
  if constexpr (BucketModel<Model>) {
    return model.nonideal();
  } else {
    (void)model;
    return Model::kNonIdeal;
  }
}

// The model instance a batch runs: a built-in carries nothing; a user model (interpreted, or
// compiled for it) reads its program from the batch (BatchInputView::program).
template <class Model, class Input>
UKES_HD UKES_INLINE Model model_for(const Input& in) {
  if constexpr (requires { Model(in.program); }) {
    return Model(in.program);
  } else {
    (void)in;
    return Model{};
  }
}

// Fills the parameter slots a model derives from its parameters (p holds kParamCount<Model>,
// its own first): a user model's parameter-only values, computed once per system rather than in
// every evaluation. Built-ins derive nothing.
template <class Model, class T>
UKES_HD UKES_INLINE void derive_parameters(const Model& model, T* p) {
  if constexpr (requires { model.derive_parameters(p); }) {
    model.derive_parameters(p);
  } else {
    (void)model;
    (void)p;
  }
}

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
