// A built-in model whose functions are generated from its definition file at build time
// (kernels/models/definitions/generate_segments.cpp): the same code generator writes the kernel
// NVRTC compiles for a user model (kernels/backend/cuda/jit/codegen.hpp), so the definition is
// the one source of the model's mathematics and the built-in runs what the definition compiled
// runs, with the built-in's metadata (name, defaults, coordinates, end time, gains) beside it.
//
// Every catalogue model is one. Generated code evaluates common subexpressions once (swarm: each
// pair's distance once, where the C++ it replaced computed it twice: 2.4 times as fast on an
// H200); the other hand-written headers ran within 2.5% of their definitions compiled on an H100,
// none faster by more than run-to-run spread (benchmarks/README.md, "Built-ins generated from
// their definitions"), so none was kept.
//
// The functions are those of UserModel (kernels/models/user/user_model.hpp) for a model compiled
// for its sizes, as static functions of the model type, which a built-in model has
// (kernels/models/model_concept.hpp): mass entries not stored stay those of the identity, other
// outputs start at zero.
#pragma once

#include "kernels/expr/program.hpp"
#include "kernels/models/model_concept.hpp"
#include "kernels/models/user/user_model.hpp"

namespace ukes::models {

// What a caller that holds a system's parameter slots itself needs (kSlotsHeld, below).
template <class Segments, bool kSlotsHeld>
struct HeldParameterSlots {};
template <class Segments>
struct HeldParameterSlots<Segments, true> {
  static constexpr int kParamCapacity = Segments::kParamSlots;  // kParamCount (model_concept.hpp)

  // Once per system: p's slots after the model's parameters, from those alone.
  template <class T>
  UKES_HD static void derive_parameters(T* p) {
    Segments::Derived(expr::Inputs<T, T>{nullptr, nullptr, T(0), p, nullptr},
                      SegmentArrayStore<T>{p});
  }
};

// kSlotsHeld: p holds all the program's parameter slots, the derived ones filled once per system
// by derive_parameters (OnHeldSlots; the CPU's lanes,
// kernels/backend/cpu/simd/lane_batch_impl.hpp). Otherwise p holds the model's parameters alone, as
// a built-in's systems do, and each function derives the rest at each call.
template <class Segments, bool kSlotsHeld = false>
struct GeneratedFunctions : HeldParameterSlots<Segments, kSlotsHeld> {
  using OnHeldSlots = GeneratedFunctions<Segments, true>;
  static constexpr int kN = Segments::kShape.n;
  static constexpr int kPositionRows = Segments::kShape.position_rows;
  static constexpr int kVelocityRows = Segments::kShape.velocity_rows;
  static constexpr bool kNonIdeal = Segments::kNonIdeal;
  // S: the working precision T, or a series in it (the servo derivatives' Taylor arithmetic,
  // kernels/autodiff/taylor.hpp), as for the rows below.
  template <class S, class T>
  UKES_HD static void mass(const Vec<S, kN>& q, S t, const T* p, Mat<S, kN, kN>& M) {
    M = Mat<S, kN, kN>::identity();
    const Parameters<T> slots(p);
    Segments::Mass(expr::Inputs<S, T>{&q[0], nullptr, t, slots.values(), nullptr},
                   SegmentMatrixStore<S, kN>{M});
  }

  template <class S, class T>
  UKES_HD static void force(const Vec<S, kN>& q, const Vec<S, kN>& qd, S t, const T* p,
                            Vec<S, kN>& Q) {
    Q = Vec<S, kN>::zero();
    const Parameters<T> slots(p);
    Segments::Force(expr::Inputs<S, T>{&q[0], &qd[0], t, slots.values(), nullptr},
                    SegmentArrayStore<S>{&Q[0]});
  }

  // Time, and Q in the velocity rows, may be types of their own: a constraint form's jets of no
  // seeded input (kernels/uk/constraint_form.hpp).
  template <class S, class Time, class T>
  UKES_HD UKES_INLINE static void position_rows(const Vec<S, kN>& q, Time t, const T* p, S* phi) {
    const Parameters<T> slots(p);
    Segments::PositionRows(expr::Inputs<S, T, S, Time>{&q[0], nullptr, t, slots.values(), nullptr},
                           SegmentArrayStore<S>{phi});
  }

  template <class Q, class S, class Time, class T>
  UKES_HD UKES_INLINE static void velocity_rows(const Vec<Q, kN>& q, const Vec<S, kN>& qd, Time t,
                                                const T* p, S* psi) {
    const Parameters<T> slots(p);
    Segments::VelocityRows(expr::Inputs<S, T, Q, Time>{&q[0], &qd[0], t, slots.values(), nullptr},
                           SegmentArrayStore<S>{psi});
  }

  template <class T>
  UKES_HD static void nonideal_force(const Vec<T, kN>& q, const Vec<T, kN>& qd, T t, const T* p,
                                     const Vec<T, kN>& Qc_ideal, Vec<T, kN>& C) {
    C = Vec<T, kN>::zero();
    const Parameters<T> slots(p);
    Segments::NonIdealForce(expr::Inputs<T, T>{&q[0], &qd[0], t, slots.values(), &Qc_ideal[0]},
                            SegmentArrayStore<T>{&C[0]});
  }

  template <class T>
  UKES_HD static void initial_state(const T* p, Vec<T, kN>& q, Vec<T, kN>& qd) {
    q = Vec<T, kN>::zero();
    qd = Vec<T, kN>::zero();
    const Parameters<T> slots(p);
    const expr::Inputs<T, T> in{nullptr, nullptr, T(0), slots.values(), nullptr};
    Segments::InitialQ(in, SegmentArrayStore<T>{&q[0]});
    Segments::InitialQd(in, SegmentArrayStore<T>{&qd[0]});
  }

 private:
  // The program's parameter slots: the model's parameters, then what the program derives from
  // them alone (kernels/expr/compiler.hpp). A user model's kernel derives those once per system,
  // into slots its batch has, and so does a caller of OnHeldSlots; a built-in's systems hold their
  // parameters alone, so they are derived here, by the same segment, at each call (as the
  // hand-written headers did).
  template <class T>
  struct Parameters {
    static constexpr bool kDerived = !kSlotsHeld && Segments::kParamSlots > Segments::kShape.params;
    const T* given;
    T slots[kDerived ? Segments::kParamSlots : 1];

    UKES_HD explicit Parameters(const T* p) : given(p) {
      if constexpr (kDerived) {
        for (int k = 0; k < Segments::kShape.params; ++k) slots[k] = p[k];
        Segments::Derived(expr::Inputs<T, T>{nullptr, nullptr, T(0), slots, nullptr},
                          SegmentArrayStore<T>{slots});
      }
    }
    Parameters(const Parameters&) = delete;
    Parameters& operator=(const Parameters&) = delete;

    // The model's parameters, then the derived ones. A function, not a pointer member: an object
    // holding its own address is written to local memory (ellipse_particle's right-hand side
    // alone had 64 B of stack for such stores, never read).
    UKES_HD const T* values() const {
      if constexpr (kDerived) {
        return slots;
      } else {
        return given;
      }
    }
  };
};

}  // namespace ukes::models
