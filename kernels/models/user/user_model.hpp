// A model defined at run time (docs/MODEL_FORMAT.md): its compiled program (kernels/expr/) run
// by the same kernels as a built-in model.
//
// Kernels size their arrays at compile time, so a user model runs in a bucket: UserModel<K> holds
// any model with at most K coordinates and K constraint rows. Past the model's own sizes the
// bucket is padding that changes no number of the model: unit mass and zero force on the extra
// coordinates (which stay at rest), zero constraint rows, and loops, error norms and
// pseudoinverses that stop at the model's sizes (ModelShape, kernels/models/model_concept.hpp).
// A model therefore gives what it gives as a built-in of its exact size, up to the order in
// which its expressions are written.
#pragma once

#include <type_traits>

#include "kernels/expr/program.hpp"
#include "kernels/models/model_concept.hpp"

namespace ukes {

// What the kernels read of a compiled user model; lives where the kernels run (host or device
// memory) for the whole run, and travels in BatchInputView::program.
struct UserModelProgram {
  expr::ProgramView code;
  ModelShape shape{};
  bool nonideal = false;
  int instruction_count = 0;  // the lengths of code.code and code.constants (copies to a device)
  int constant_count = 0;
};

// Where a segment's outputs go (kernels/expr/program.hpp): output k into an array, or matrix
// entry k = i kMassStride + j (mass, actuation) into a matrix. User models and the built-ins
// generated from definitions (kernels/models/generated_functions.hpp) store through these.
template <class S>
struct SegmentArrayStore {
  S* out;
  UKES_HD void operator()(int k, const S& value) const { assign(out[k], value); }
};
template <class T, int N>
struct SegmentMatrixStore {
  Mat<T, N, N>& M;
  UKES_HD void operator()(int k, const T& value) const {
    M(k / expr::kMassStride, k % expr::kMassStride) = value;
  }
};

// Parameters a user model may have, its derived ones included: a system's kernel holds them all.
inline constexpr int kUserParamCapacity = expr::kParameterSlots;

// How a user model's functions run: by the interpreter of kernels/expr/program.hpp, everywhere.
// A kernel compiled at run time for one model runs code generated from its program instead
// (kernels/backend/cuda/jit/codegen.hpp), through the same UserModel: only the evaluation and
// the sizes differ.
struct InterpretedSegments {
  template <class S, class T, class Store>
  UKES_HD UKES_INLINE static void run(const UserModelProgram& program, expr::Segment segment,
                                      const expr::Inputs<S, T>& in, const Store& store) {
    expr::run_segment<expr::kMaxRegisters>(program.code, segment, in, store);
  }
};

// The sizes a UserModel's kernels see. The interpreter's are its bucket's capacities
// (kRowCapacity makes it a BucketModel, kernels/models/model_concept.hpp: its instance says its
// own sizes). Generated segments know their model (kShape, kParamSlots, kNonIdeal), so a model
// compiled for them has its own sizes as constants, as a built-in does: exact arrays, the
// built-ins' unpadded pseudoinverse, loops of known length.
template <class Segments, int kCapacity>
struct UserSizes {
  static constexpr bool kFixedShape = false;
  static constexpr int kN = kCapacity;
  static constexpr int kRowCapacity = kCapacity;
  static constexpr int kParamCapacity = kUserParamCapacity;
  static constexpr bool kNonIdeal = true;  // whether it has one is the program's to say
};
template <class Segments, int kCapacity>
requires requires { Segments::kShape; }
struct UserSizes<Segments, kCapacity> {
  static constexpr bool kFixedShape = true;
  static constexpr int kN = Segments::kShape.n;
  static constexpr int kPositionRows = Segments::kShape.position_rows;
  static constexpr int kVelocityRows = Segments::kShape.velocity_rows;
  static constexpr int kParamCapacity = Segments::kParamSlots;
  static constexpr bool kNonIdeal = Segments::kNonIdeal;
};

// kCapacity: the bucket (kernels/models/user/buckets.hpp); the interpreter's capacities.
template <int kCapacity, class Segments = InterpretedSegments>
class UserModel : public UserSizes<Segments, kCapacity> {
  using Sizes = UserSizes<Segments, kCapacity>;

 public:
  static constexpr const char* kName = "user";
  using Sizes::kN;

  UKES_HD UserModel() = default;
  UKES_HD explicit UserModel(const UserModelProgram* program) : program_(program) {}

  UKES_HD ModelShape shape() const {
    if constexpr (Sizes::kFixedShape) {
      return Segments::kShape;
    } else {
      return program_->shape;
    }
  }
  UKES_HD bool nonideal() const {
    if constexpr (Sizes::kFixedShape) {
      return Segments::kNonIdeal;
    } else {
      return program_->nonideal;
    }
  }

  // S: the working precision T, or a series in it (kernels/autodiff/taylor.hpp).
  template <class S, class T>
  UKES_HD void mass(const Vec<S, kN>& q, S t, const T* p, Mat<S, kN, kN>& M) const {
    M = Mat<S, kN, kN>::identity();
    run(expr::Segment::kMass, expr::Inputs<S, T>{&q[0], nullptr, t, p, nullptr},
        SegmentMatrixStore<S, kN>{M});
  }

  template <class S, class T>
  UKES_HD void force(const Vec<S, kN>& q, const Vec<S, kN>& qd, S t, const T* p,
                     Vec<S, kN>& Q) const {
    Q = Vec<S, kN>::zero();
    run(expr::Segment::kForce, expr::Inputs<S, T>{&q[0], &qd[0], t, p, nullptr},
        SegmentArrayStore<S>{&Q[0]});
  }

  // Time, and Q in the velocity rows, may differ from S for generated segments (as
  // GeneratedFunctions' do, kernels/models/generated_functions.hpp); the interpreter's registers
  // are all of one type.
  template <class S, class Time, class T>
  requires(Sizes::kFixedShape || std::is_same_v<Time, S>) UKES_HD
      void position_rows(const Vec<S, kN>& q, Time t, const T* p, S* phi) const {
    run(expr::Segment::kPositionRows, expr::Inputs<S, T, S, Time>{&q[0], nullptr, t, p, nullptr},
        SegmentArrayStore<S>{phi});
  }

  template <class Q, class S, class Time, class T>
  requires(Sizes::kFixedShape || (std::is_same_v<Q, S> && std::is_same_v<Time, S>)) UKES_HD
      void velocity_rows(const Vec<Q, kN>& q, const Vec<S, kN>& qd, Time t, const T* p,
                         S* psi) const {
    run(expr::Segment::kVelocityRows, expr::Inputs<S, T, Q, Time>{&q[0], &qd[0], t, p, nullptr},
        SegmentArrayStore<S>{psi});
  }

  template <class T>
  UKES_HD void nonideal_force(const Vec<T, kN>& q, const Vec<T, kN>& qd, T t, const T* p,
                              const Vec<T, kN>& Qc_ideal, Vec<T, kN>& C) const {
    C = Vec<T, kN>::zero();
    run(expr::Segment::kNonIdealForce, expr::Inputs<T, T>{&q[0], &qd[0], t, p, &Qc_ideal[0]},
        SegmentArrayStore<T>{&C[0]});
  }

  // A controlled run's actuation matrix B (n x k, docs/CONTROL.md) into the first k columns of B,
  // the others left as they are (the caller's zeros).
  template <class T>
  UKES_HD void actuation(const Vec<T, kN>& q, const Vec<T, kN>& qd, T t, const T* p,
                         Mat<T, kN, kN>& B) const {
    run(expr::Segment::kActuation, expr::Inputs<T, T>{&q[0], &qd[0], t, p, nullptr},
        SegmentMatrixStore<T, kN>{B});
  }

  // Once per system, before the functions above: the values of theirs that depend on parameters
  // alone, into p's slots after the model's parameters (kernels/expr/compiler.hpp).
  template <class T>
  UKES_HD void derive_parameters(T* p) const {
    run(expr::Segment::kDerived, expr::Inputs<T, T>{nullptr, nullptr, T(0), p, nullptr},
        SegmentArrayStore<T>{p});
  }

  template <class T>
  UKES_HD void initial_state(const T* p, Vec<T, kN>& q, Vec<T, kN>& qd) const {
    q = Vec<T, kN>::zero();
    qd = Vec<T, kN>::zero();
    const expr::Inputs<T, T> in{nullptr, nullptr, T(0), p, nullptr};
    run(expr::Segment::kInitialQ, in, SegmentArrayStore<T>{&q[0]});
    run(expr::Segment::kInitialQd, in, SegmentArrayStore<T>{&qd[0]});
  }

 private:
  template <class S, class T, class Q, class Time, class Store>
  UKES_HD UKES_INLINE void run(expr::Segment segment, const expr::Inputs<S, T, Q, Time>& in,
                               const Store& store) const {
    Segments::run(*program_, segment, in, store);
  }

  const UserModelProgram* program_ = nullptr;
};

}  // namespace ukes
