// A compiled model program and its evaluator, __host__ __device__: what a user model
// (kernels/models/user/user_model.hpp) runs for its mass matrix, forces and constraint rows.
//
// A program is straight-line code for a register machine, one segment per model function, made
// by kernels/expr/compiler.hpp from the definition's expressions. Every value lives in a register
// (the compiler proves at most kMaxRegisters are alive at once), so an evaluation needs no heap
// and no names: user identifiers never reach this level. The scalar S is the working precision or
// a Jet (kernels/autodiff/jet.hpp), so the same program yields values and, for constraint rows,
// the derivatives the UK equation needs; parameters and constants arrive as plain numbers.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/autodiff/jet.hpp"
#include "kernels/expr/operations.hpp"

// X(Name): the model functions a program holds. Actuation is a controlled run's actuation matrix
// (docs/CONTROL.md), empty unless the run gives one. Derived computes, once per system, the values
// of the others that depend on parameters and constants alone (kernels/expr/compiler.hpp), into
// the parameter slots after the model's own, where those segments load them. The Event segments
// belong to a run's event program alone (docs/EVENTS.md, kernels/ensemble/event_table.hpp): the
// conditions g (output e for event e) and the resets' new q and qd (output e kMassStride + j);
// a model's program leaves them empty.
// clang-format off
#define UKES_EXPR_SEGMENTS(X) \
  X(Mass) X(Force) X(PositionRows) X(VelocityRows) X(NonIdealForce) X(InitialQ) X(InitialQd) \
  X(Actuation) X(Derived) X(EventConditions) X(EventResetQ) X(EventResetQd)
// clang-format on

namespace ukes::expr {

enum class Segment : int {
#define UKES_EXPR_SEGMENT_ENUM(Name) k##Name,
  UKES_EXPR_SEGMENTS(UKES_EXPR_SEGMENT_ENUM)
#undef UKES_EXPR_SEGMENT_ENUM
      kCount
};
inline constexpr int kSegmentCount = static_cast<int>(Segment::kCount);

// Values alive at once in a program: the evaluator's register file.
inline constexpr int kMaxRegisters = 64;

// The row stride of matrix outputs (mass, actuation; run_segment): the largest n of a user model.
inline constexpr int kMassStride = 32;

// Parameter slots a system holds for a program: the model's parameters, then the derived ones.
inline constexpr int kParameterSlots = 128;

// dst = op(a, b, c) over registers; loads read input `a`; Store writes output a from register b.
struct Instruction {
  std::uint16_t op, dst, a, b, c;
};

// Trivially copyable: points at host or device memory.
struct ProgramView {
  const Instruction* code = nullptr;
  const double* constants = nullptr;
  std::int32_t begin[kSegmentCount] = {}, end[kSegmentCount] = {};  // instruction ranges
  std::int32_t registers = 0;
};

// What a segment reads. q, qd, qc have the model's n entries (qd: velocity-level segments only;
// qc, the ideal constraint force: the non-ideal force only); p its parameters. Q and Time: the
// types of q and t where they differ from S, as in a constraint form's rows, whose q (velocity
// rows) and t carry no seeded derivative (InactiveOf, below).
template <class S, class T, class Q = S, class Time = S>
struct Inputs {
  const Q* q = nullptr;
  const S* qd = nullptr;
  Time t{};
  const T* p = nullptr;
  const S* qc = nullptr;
};

// The type of a value of S that depends on no seeded input (constants, parameters): Jet<T, 0> for
// a jet (kernels/autodiff/jet.hpp), S itself otherwise. Code generated from a program gives it to
// those values, and operations promote it where it meets S.
template <class S>
struct Inactive {
  using type = S;
};
template <class T, int N>
struct Inactive<Jet<T, N>> {
  using type = Jet<T, 0>;
};
template <class S>
using InactiveOf = typename Inactive<S>::type;

namespace detail {

// 1 where b holds, else 0 (lane by lane for a lane type's mask, kernels/core/lanes.hpp).
template <class S, class Mask>
UKES_HD UKES_INLINE S truth(const Mask& b) {
  if constexpr (std::is_same_v<Mask, bool>) {
    return b ? S(1) : S(0);  // the plain ternary (kLaneValued, kernels/autodiff/jet.hpp)
  } else {
    return pick(b, S(1), S(0));
  }
}

// Where x's value is not zero: the truth of a condition.
template <class S>
UKES_HD UKES_INLINE auto nonzero(const S& x) {
  const auto v = value_of(x);
  return v != decltype(v)(0);
}

// `if(c, a, b)`: a where c is not zero, else b; the operand itself for a plain scalar (a jet is
// not copied), lane by lane for a lane type.
template <class C, class S>
UKES_HD UKES_INLINE decltype(auto) choose(const C& c, const S& a, const S& b) {
  if constexpr (kLaneValued<S>) {
    return pick(nonzero(c), a, b);
  } else {
    return nonzero(c) ? a : b;  // the plain ternary (kLaneValued, kernels/autodiff/jet.hpp)
  }
}

// Operands of two types (a jet and one of no seeded input, Inactive above) as the one that mixes
// them: the operand itself where it has that type, else converted.
template <class X, class Y>
using Promoted = std::conditional_t<std::is_convertible_v<const Y&, X>, X, Y>;
template <class P, class X>
UKES_HD UKES_INLINE decltype(auto) promote(const X& x) {
  if constexpr (std::is_same_v<X, P>) {
    return (x);
  } else {
    return P(x);
  }
}
template <class C, class A, class B>
UKES_HD UKES_INLINE auto choose(const C& c, const A& a, const B& b) {
  using P = Promoted<A, B>;
  return choose(c, promote<P>(a), promote<P>(b));
}

// sin and cos. On a lane type both come from one reduction (sin_and_cos, kernels/autodiff/jet.hpp),
// inline: the sin and the cos of one angle, in the mass matrix, the forces and the rows alike,
// are then one computation. Other types call their own.
template <bool kCosine, class S>
UKES_HD UKES_INLINE S sine_or_cosine(const S& x) {
  if constexpr (kLanes<S>) {
    S s, c;
    sin_and_cos(x, s, c);
    return kCosine ? c : s;
  } else if constexpr (kCosine) {
    return cos(x);
  } else {
    return sin(x);
  }
}

// Unary and binary functions and operators (moves and `if` are the evaluator's), one operation
// at compile time: what the interpreter runs for each instruction and what code generated from a
// program (kernels/backend/cuda/jit/codegen.hpp) calls, which then holds no other operation's code.
// Generated code's operands may have two types (a jet and one of no seeded input, Inactive above):
// the four arithmetic operators take them as they are (kernels/autodiff/jet.hpp); every other
// operation runs on both promoted to the type that mixes them, where the promoted operand's
// gradient is a zero the compiler sees.
template <Op kOp, class X, class Y>
UKES_HD UKES_INLINE Promoted<X, Y> apply(const X& x, const Y& y) {
  using S = X;  // the one type of both operands, past the promotion below
  (void)y;      // unary operations read x alone
  if constexpr (kOp == Op::kAdd) {
    return x + y;
  } else if constexpr (kOp == Op::kSub) {
    return x - y;
  } else if constexpr (kOp == Op::kMul) {
    return x * y;
  } else if constexpr (kOp == Op::kDiv) {
    return x / y;
  } else if constexpr (!std::is_same_v<X, Y>) {
    using P = Promoted<X, Y>;
    return apply<kOp>(promote<P>(x), promote<P>(y));
  } else if constexpr (kOp == Op::kNeg) {
    return -x;
  } else if constexpr (kOp == Op::kLt) {
    return truth<S>(value_of(x) < value_of(y));
  } else if constexpr (kOp == Op::kLe) {
    return truth<S>(value_of(x) <= value_of(y));
  } else if constexpr (kOp == Op::kGt) {
    return truth<S>(value_of(x) > value_of(y));
  } else if constexpr (kOp == Op::kGe) {
    return truth<S>(value_of(x) >= value_of(y));
  } else if constexpr (kOp == Op::kEq) {
    return truth<S>(value_of(x) == value_of(y));
  } else if constexpr (kOp == Op::kNe) {
    return truth<S>(value_of(x) != value_of(y));
  } else if constexpr (kOp == Op::kAnd) {
    return truth<S>(nonzero(x) && nonzero(y));
  } else if constexpr (kOp == Op::kOr) {
    return truth<S>(nonzero(x) || nonzero(y));
  } else if constexpr (kOp == Op::kNot) {
    return truth<S>(value_of(x) == decltype(value_of(x))(0));
  } else if constexpr (kOp == Op::kSin) {
    return sine_or_cosine<false>(x);
  } else if constexpr (kOp == Op::kCos) {
    return sine_or_cosine<true>(x);
  } else if constexpr (kOp == Op::kTan) {
    return tan(x);
  } else if constexpr (kOp == Op::kAsin) {
    return asin(x);
  } else if constexpr (kOp == Op::kAcos) {
    return acos(x);
  } else if constexpr (kOp == Op::kAtan) {
    return atan(x);
  } else if constexpr (kOp == Op::kSinh) {
    return sinh(x);
  } else if constexpr (kOp == Op::kCosh) {
    return cosh(x);
  } else if constexpr (kOp == Op::kTanh) {
    return tanh(x);
  } else if constexpr (kOp == Op::kExp) {
    return exp(x);
  } else if constexpr (kOp == Op::kLog) {
    return log(x);
  } else if constexpr (kOp == Op::kSqrt) {
    return sqrt(x);
  } else if constexpr (kOp == Op::kAbs) {
    return abs(x);
  } else if constexpr (kOp == Op::kSign) {
    return sign(x);
  } else if constexpr (kOp == Op::kAtan2) {
    return atan2(x, y);
  } else if constexpr (kOp == Op::kPow) {
    return pow(x, y);
  } else if constexpr (kOp == Op::kHypot) {
    return hypot(x, y);
  } else if constexpr (kOp == Op::kMin) {
    return jet_min(x, y);  // the chosen operand's value and derivatives
  } else if constexpr (kOp == Op::kMax) {
    return jet_max(x, y);
  } else {
    // A new operation without a branch here fails to compile, not a silent NaN.
    static_assert(kOp == Op::kAdd, "an operation without a definition in expr::detail::apply");
  }
}

// The same with the operation known at run time (the interpreter on the device, which keeps a
// second dispatch: see run_segment).
template <class S>
UKES_HD UKES_INLINE S apply(Op op, const S& x, const S& y) {
  switch (op) {
#define UKES_EXPR_APPLY_CASE_1(Name) \
  case Op::k##Name:                  \
    return apply<Op::k##Name>(x, y);
#define UKES_EXPR_APPLY_CASE_2(Name) UKES_EXPR_APPLY_CASE_1(Name)
#define UKES_EXPR_APPLY_CASE_3(Name)  // `if`: run_segment's
#define UKES_EXPR_APPLY_CASE(Name, spelling, arity) UKES_EXPR_APPLY_CASE_##arity(Name)
    UKES_EXPR_OPERATORS(UKES_EXPR_APPLY_CASE)
    UKES_EXPR_FUNCTIONS(UKES_EXPR_APPLY_CASE)
#undef UKES_EXPR_APPLY_CASE
#undef UKES_EXPR_APPLY_CASE_3
#undef UKES_EXPR_APPLY_CASE_2
#undef UKES_EXPR_APPLY_CASE_1
    default:  // moves and `if` are run_segment's
      break;
  }
  return S(NAN);
}

}  // namespace detail

// Runs one segment: store(k, value) for each of its outputs. Mass entries come as
// k = i kMassStride + j for every (i, j), so that a store finds its entry with a shift, not a
// division by n; the other segments' k is the coordinate or row index.
// Out of line on the device: a user model calls it from every model function of every kernel
// path, and inlined copies of its switch over Jet operations made ptxas take many minutes per
// bucket (kernels/models/user/buckets.hpp).
template <int kRegisters, class S, class T, class Store>
UKES_HD UKES_DEVICE_NOINLINE void run_segment(const ProgramView& program, Segment segment,
                                              const Inputs<S, T>& in, Store&& store) {
  // Registers start unset (every one is written before it is read): default-constructing 64 jets
  // on every call cost 9% of the scara user model's throughput, 1-4% of four_bar's and swarm's.
  union Register {
    S value;
    UKES_HD Register() {}
  };
  Register file[kRegisters];
  const auto r = [&file](int k) -> S& { return file[k].value; };
  const int s = static_cast<int>(segment);
  for (int pc = program.begin[s]; pc < program.end[s]; ++pc) {
    const Instruction i = program.code[pc];
    switch (static_cast<Op>(i.op)) {
      case Op::kLoadQ:
        assign(r(i.dst), in.q[i.a]);
        break;
      case Op::kLoadQd:
        assign(r(i.dst), in.qd[i.a]);
        break;
      case Op::kLoadT:
        assign(r(i.dst), in.t);
        break;
      case Op::kLoadParam:
        assign(r(i.dst), S(in.p[i.a]));
        break;
      case Op::kLoadConst:
        assign(r(i.dst), S(T(program.constants[i.a])));
        break;
      case Op::kLoadQc:
        assign(r(i.dst), in.qc[i.a]);
        break;
      case Op::kStore:
        store(static_cast<int>(i.a), r(i.b));
        break;
      case Op::kIf:
        assign(r(i.dst), detail::choose(r(i.a), r(i.b), r(i.c)));
        break;
#ifdef __CUDA_ARCH__
      // On the device one case per operation made ptxas spill in run_segment (0 to 1.3 KB in
      // bucket 12): the second dispatch stays there.
      default:
        assign(r(i.dst), detail::apply(static_cast<Op>(i.op), r(i.a), r(i.b)));
        break;
#else
      case Op::kCount:
        break;
        // A case per operation, each calling its operation directly: one dispatch per
        // instruction rather than two (which cost the user models 6-9% of their time on the CPU).
#define UKES_EXPR_APPLY_1(Name)                                   \
  case Op::k##Name:                                               \
    assign(r(i.dst), detail::apply<Op::k##Name>(r(i.a), r(i.b))); \
    break;
#define UKES_EXPR_APPLY_2(Name) UKES_EXPR_APPLY_1(Name)
#define UKES_EXPR_APPLY_3(Name)  // `if`, above
#define UKES_EXPR_APPLY(Name, spelling, arity) UKES_EXPR_APPLY_##arity(Name)
        UKES_EXPR_OPERATORS(UKES_EXPR_APPLY)
        UKES_EXPR_FUNCTIONS(UKES_EXPR_APPLY)
#undef UKES_EXPR_APPLY
#undef UKES_EXPR_APPLY_3
#undef UKES_EXPR_APPLY_2
#undef UKES_EXPR_APPLY_1
#endif
    }
  }
}

}  // namespace ukes::expr
