// Rank-revealing Moore–Penrose pseudoinverse: Householder QR where it provably suffices, one-sided
// (Hestenes) Jacobi SVD otherwise (PseudoInverse below says when).
//
// Jacobi orthogonalization is branch-light, needs no workspace beyond the matrix itself, computes
// small singular values to high relative accuracy and is what cuSOLVER's batched gesvdj does on
// the GPU's staged path.
//
// For X (R x C) the sweeps find an orthogonal V (C x C) such that the columns of W = X V are
// mutually orthogonal; then X = U S V^T with W = U S and
//     X^+ = V S^+ U^T = V diag(1/s_k^2) W^T   (over the kept singular values s_k).
// We factor whichever of B or B^T has fewer columns, so the work scales with min(R, C)^2.
//
// Rank tolerance: a singular value s_k is kept when s_k > rtol * s_max. The default
// rtol = max(R, C) * eps(T) is the convention of LAPACK-based tools (numpy.linalg.matrix_rank,
// MATLAB rank/pinv); a caller may pass its own. A zero matrix has rank 0 and pseudoinverse 0.
#pragma once

#include "kernels/linalg/small_matrix.hpp"

// The QR's loop bounds, X's active sizes. nvcc and the per-system CPU code read them through xr()
// and xc(), as the figures of benchmarks/kernel_resources.tsv were measured with: read into locals
// instead, they gave nvcc other kernels (scara's FP32 warp kernel 153 registers, not 159; one of
// slider_crank's 142, not 137). The lanes spell them as GCC 12 keeps a loop pragma on
// (UKES_LANE_UNROLL, kernels/core/hd.hpp): it ignores one whose condition calls a member function
// of a class template.
#if defined(UKES_UNROLL_HOST_LOOPS) && !defined(__CUDA_ARCH__)
#define UKES_X_ROWS (kPadded ? xr_ : XR)
#define UKES_X_COLS (kPadded ? xc_ : XC)
#else
#define UKES_X_ROWS xr()
#define UKES_X_COLS xc()
#endif

namespace ukes {

// An SVD X = U S V^T kept as W = U S and V: all the pseudoinverse needs, whoever computed it
// (the Jacobi sweeps below, or a batched library SVD through PseudoInverse::factors_from_svd).
template <class T, int R, int C>
struct SvdFactors {
  Mat<T, R, C> W;  // X V: orthogonal columns, column k has norm sigma[k]
  Mat<T, C, C> V;
  Vec<T, C> sigma;
  int sweeps = 0;  // Jacobi sweeps that produced them (0 when computed elsewhere)

  UKES_HD T sigma_max() const {
    T s = T(0);
    UKES_LANE_UNROLL
    for (int k = 0; k < C; ++k) s = max_of(s, sigma[k]);
    return s;
  }
};

// The rotation [[c, s], [-s, c]] that zeroes the off-diagonal entry of the 2x2 Gram matrix
// [[alpha, gamma], [gamma, beta]] of a column pair (gamma != 0); JacobiSvd and its team variant
// (team_jacobi_svd.hpp) both take it.
template <class T>
struct JacobiRotation {
  T c, s;
};

template <class T>
UKES_HD JacobiRotation<T> jacobi_rotation(T alpha, T beta, T gamma) {
  const T zeta = (beta - alpha) / (T(2) * gamma);
  const T t = (zeta >= T(0) ? T(1) : T(-1)) / (abs(zeta) + sqrt(T(1) + zeta * zeta));
  const T c = T(1) / sqrt(T(1) + t * t);
  return {c, c * t};
}

inline constexpr int kMaxJacobiSweeps = 40;

// One-sided Jacobi sweeps on W (R x C) in place, accumulating the rotations into V (the identity
// on entry), until no pair of columns needs a rotation; returns the sweeps taken. In place so that
// the pseudoinverse runs them on its own storage: on the GPU every copy of W and V is a frame
// array (four_bar's solve kept five such matrices alive).

template <class T, int R, int C>
UKES_HD int jacobi_sweeps(Mat<T, R, C>& W, Mat<T, C, C>& V) {
  const T tol = Epsilon<T>::value;
  // A column whose norm is at most eps |X|_F is rounding noise (a null direction of a rank-
  // deficient X): rotating it against others only trades noise for noise and would keep the
  // sweeps from ever converging (every rotation of a large column re-injects noise of that very
  // size), so such pairs count as orthogonal. This leaves an O(eps |X|) backward error, as
  // rounding does anyway; singular values below eps |X|_F <= sqrt(min(R, C)) eps s_max are
  // not resolved, which is below any rank cutoff rtol >= sqrt(min(R, C)) eps (the default
  // max(R, C) eps included).
  T fro2 = T(0);
  for (int r = 0; r < R; ++r)
    for (int k = 0; k < C; ++k) fro2 += W(r, k) * W(r, k);
  const T negligible = tol * tol * fro2;
  int sweeps = 0;
  for (; sweeps < kMaxJacobiSweeps; ++sweeps) {
    bool rotated = false;
    for (int i = 0; i < C - 1; ++i) {
      for (int j = i + 1; j < C; ++j) {
        T alpha = T(0), beta = T(0), gamma = T(0);
        for (int r = 0; r < R; ++r) {
          alpha += W(r, i) * W(r, i);
          beta += W(r, j) * W(r, j);
          gamma += W(r, i) * W(r, j);
        }
        if (!(alpha > negligible && beta > negligible)) continue;      // noise column
        if (!(abs(gamma) > tol * sqrt(alpha) * sqrt(beta))) continue;  // already orthogonal
        rotated = true;
        const JacobiRotation<T> g = jacobi_rotation(alpha, beta, gamma);
        for (int r = 0; r < R; ++r) {
          const T wi = W(r, i), wj = W(r, j);
          W(r, i) = g.c * wi - g.s * wj;
          W(r, j) = g.s * wi + g.c * wj;
        }
        for (int r = 0; r < C; ++r) {
          const T vi = V(r, i), vj = V(r, j);
          V(r, i) = g.c * vi - g.s * vj;
          V(r, j) = g.s * vi + g.c * vj;
        }
      }
    }
    if (!rotated) break;
  }
  return sweeps;
}

// The norms of W's columns: its singular values once its columns are orthogonal.
template <class T, int R, int C>
UKES_HD Vec<T, C> column_norms(const Mat<T, R, C>& W) {
  Vec<T, C> sigma;
  UKES_LANE_UNROLL
  for (int k = 0; k < C; ++k) {
    T s2 = T(0);
    UKES_LANE_UNROLL
    for (int r = 0; r < R; ++r) s2 += W(r, k) * W(r, k);
    sigma[k] = sqrt(s2);
  }
  return sigma;
}

template <class T, int R, int C>
struct JacobiSvd : SvdFactors<T, R, C> {
  static constexpr int kMaxSweeps = kMaxJacobiSweeps;

  UKES_HD explicit JacobiSvd(const Mat<T, R, C>& X)
      : SvdFactors<T, R, C>{X, Mat<T, C, C>::identity(), Vec<T, C>::zero(), 0} {
    this->sweeps = jacobi_sweeps(this->W, this->V);
    this->sigma = column_norms(this->W);
  }
};

template <class T>
UKES_HD constexpr T default_rank_rtol(int rows, int cols) {
  return T(rows > cols ? rows : cols) * Epsilon<T>::value;
}

// Below this conditioning (smallest kept singular value over the largest) a PseudoInverse is
// always factored by the SVD, so conditioning() is exact wherever a caller tells near rank loss
// from a healthy matrix (SystemKernel reports `inconsistent` below it). Above it the factors may
// come from QR, and conditioning() is then a lower bound within a factor min(R, C).
template <class T>
UKES_HD T exact_conditioning_floor() {
  return sqrt(sqrt(Epsilon<T>::value));  // eps^(1/4): 1.2e-4 in FP64, 1.9e-2 in FP32
}

// The pseudoinverse of a fixed B (R x C), factored once and applied to any number of vectors.
//
// Two factorizations of X = B (tall or square) or X = B^T (wide), one held at a time:
//  - Householder QR, X = Q R, when X has two columns or more and QR proves full column rank far
//    from the cutoff: then B^+ is R^-1 Q^T (tall) or Q R^-T (wide), the rank is min(R, C), and
//    the Jacobi SVD would have kept every singular value too. The proof is the bound
//        s_min / s_max >= kappa_lb = 1 / (|R|_F |R^-1|_F) >= s_min / (min(R, C) s_max),
//    accepted when kappa_lb > max(rtol, exact_conditioning_floor). QR costs one pass over X,
//    where Jacobi takes several sweeps of rotations: on the UK matrices (a few rows, full rank
//    away from singular configurations) this is most of the right-hand side's cost.
//  - Otherwise the one-sided Jacobi SVD above with the rank rule s > rtol * s_max, exact for
//    rank-deficient, nearly rank-deficient, zero and non-finite matrices alike.
// Both are backward stable, so B^+ agrees to rounding (relative to the conditioning) whichever
// was taken.
//
// kPadded: B is a square bucket (kernels/models/model_concept.hpp) whose leading
// ActiveBlock is the matrix and whose rest is zero. The orientation and QR's columns follow the
// active block, so the factorization does what it does for a matrix of exactly that size (a zero
// column would make QR refuse) and gives the same numbers: zero rows add exact zeros to every sum.
struct ActiveBlock {
  int rows;
  int cols;
};

namespace detail {
template <class T>
struct EntryRef {
  UKES_HD T& operator()(int, int) const;  // declared only: a WrittenMatrix's probe
};
}  // namespace detail

// A matrix given by the entries it writes: s.write(at) sets at(r, c) = B(r, c) for every entry
// (and may read back what it wrote). A pseudoinverse of one factors B in its own storage, with no
// copy of B beside it (right_solved_lower_transpose, kernels/linalg/cholesky.hpp).
template <class S, class T, int R, int C>
concept WrittenMatrix = (S::rows == R) && (S::cols == C) && requires(const S& s) {
  s.write(detail::EntryRef<T>{});
};

template <class T, int R, int C, bool kPadded = false>
class PseudoInverse {
  static_assert(!kPadded || R == C, "a padded pseudoinverse takes a square bucket");

 public:
  // Orthogonalize the columns of B when it is tall or square, of B^T when it is wide: the
  // factors are those of X = B, resp. X = B^T.
  static constexpr bool kTransposed = R < C;
  static constexpr int XR = kTransposed ? C : R;
  static constexpr int XC = kTransposed ? R : C;
  using Factors = SvdFactors<T, XR, XC>;

  UKES_HD explicit PseudoInverse(const Mat<T, R, C>& B,
                                 T rtol = default_rank_rtol<T>(R, C)) requires(!kPadded) {
    factor(B, rtol);
  }

  UKES_HD PseudoInverse(const Mat<T, R, C>& B, T rtol, ActiveBlock active) requires(kPadded) {
    factor_active(B, rtol, active);
  }

  template <WrittenMatrix<T, R, C> Source>
  UKES_HD PseudoInverse(const Source& B, T rtol) requires(!kPadded) {
    factor(B, rtol);
  }

  template <WrittenMatrix<T, R, C> Source>
  UKES_HD PseudoInverse(const Source& B, T rtol, ActiveBlock active) requires(kPadded) {
    factor_active(B, rtol, active);
  }

  // From the SVD of X computed elsewhere (factors_from_svd): the same rank rule, the same apply.
  UKES_HD PseudoInverse(const Factors& x_svd, T rtol) { take_svd(x_svd, rtol); }

  UKES_HD int rank() const { return rank_; }
  // Smallest kept singular value over the largest, in (0, 1]: how close B is to losing rank
  // beyond the dependencies already dropped (1 for a zero matrix). Exact from the SVD; from QR a
  // lower bound within a factor min(R, C), and then above exact_conditioning_floor().
  UKES_HD T conditioning() const { return conditioning_; }
  UKES_HD bool factored_by_qr() const { return qr_; }
  // Jacobi sweeps taken (0 when factored by QR or from a library's SVD).
  UKES_HD int sweeps() const { return sweeps_; }
  // Lanes of a lane type (kernels/core/lanes.hpp) this factorization leaves to the scalar one:
  // those whose QR could not prove full rank, or whose rank differs from the other lanes'. Lanes
  // run no Jacobi sweeps, whose loops end when a lane's own columns are orthogonal. False for a
  // plain scalar.
  UKES_HD MaskOf<T> unsolved() const { return unsolved_; }

  // The factors of X from an SVD B = U diag(s) V^T computed elsewhere (cuSOLVER's gesvdj
  // convention: U is R x R, V is C x C, s has min(R, C) entries in any order). u(r, k), v(c, k)
  // and s(k) read them; only the first min(R, C) columns of U and V enter.
  template <class GetU, class GetS, class GetV>
  UKES_HD static Factors factors_from_svd(const GetU& u, const GetS& s, const GetV& v) {
    Factors f;
    for (int k = 0; k < XC; ++k) f.sigma[k] = s(k);
    if constexpr (kTransposed) {
      // X = B^T = V S U^T: X's left factor W = V S (C x R), its right singular vectors U.
      for (int c = 0; c < C; ++c)
        for (int k = 0; k < R; ++k) f.W(c, k) = v(c, k) * f.sigma[k];
      for (int r = 0; r < R; ++r)
        for (int k = 0; k < R; ++k) f.V(r, k) = u(r, k);
    } else {
      // X = B = U S V^T: W = U S over the first C columns of U (R x C), and V.
      for (int r = 0; r < R; ++r)
        for (int k = 0; k < C; ++k) f.W(r, k) = u(r, k) * f.sigma[k];
      for (int c = 0; c < C; ++c)
        for (int k = 0; k < C; ++k) f.V(c, k) = v(c, k);
    }
    return f;
  }

  // B^+ r, with r of length R; the result has length C.
  UKES_HD Vec<T, C> apply(const Vec<T, R>& r) const {
    if (qr_) return apply_qr(r);
    const auto& W = x_;
    const auto& V = v_;
    Vec<T, C> x = Vec<T, C>::zero();
    if (transposed()) {
      // X = B^T = U S V^T, so B = V S U^T and B^+ = U S^-1 V^T = W diag(1/s^2) V^T.
      UKES_LANE_UNROLL
      for (int k = 0; k < XC; ++k) {
        if (all_lanes(e_[k] == T(0))) continue;
        T coef = T(0);
        UKES_LANE_UNROLL
        for (int i = 0; i < R; ++i) coef += V(i, k) * r[i];
        coef *= e_[k];
        UKES_LANE_UNROLL
        for (int j = 0; j < C; ++j) x[j] += W(j, k) * coef;
      }
    } else {
      // X = B = U S V^T: B^+ = V S^-1 U^T = V diag(1/s^2) W^T.
      UKES_LANE_UNROLL
      for (int k = 0; k < XC; ++k) {
        if (all_lanes(e_[k] == T(0))) continue;
        T coef = T(0);
        UKES_LANE_UNROLL
        for (int i = 0; i < R; ++i) coef += W(i, k) * r[i];
        coef *= e_[k];
        UKES_LANE_UNROLL
        for (int j = 0; j < C; ++j) x[j] += V(j, k) * coef;
      }
    }
    return x;
  }

  // The explicit C x R pseudoinverse (tests, assembly of small operators).
  UKES_HD Mat<T, C, R> matrix() const {
    Mat<T, C, R> P;
    UKES_LANE_UNROLL
    for (int i = 0; i < R; ++i) {
      Vec<T, R> e = Vec<T, R>::zero();
      e[i] = T(1);
      const Vec<T, C> col = apply(e);
      UKES_LANE_UNROLL
      for (int j = 0; j < C; ++j) P(j, i) = col[j];
    }
    return P;
  }

 private:
  // The sizes the factorization works on: compile-time constants unless padded.
  UKES_HD UKES_INLINE bool transposed() const {
    if constexpr (kPadded) {
      return transposed_;
    } else {
      return kTransposed;
    }
  }
  UKES_HD UKES_INLINE int xr() const {
    if constexpr (kPadded) {
      return xr_;
    } else {
      return XR;
    }
  }
  UKES_HD UKES_INLINE int xc() const {
    if constexpr (kPadded) {
      return xc_;
    } else {
      return XC;
    }
  }

  template <class Source>
  UKES_HD void factor_active(const Source& B, T rtol, ActiveBlock active) {
    transposed_ = active.rows < active.cols;
    xr_ = transposed_ ? active.cols : active.rows;
    xc_ = transposed_ ? active.rows : active.cols;
    factor(B, rtol);
  }

  // Both factorizations run on x_ and v_ in place: no copy of B, X, W or V beside them.
  template <class Source>
  UKES_HD void factor(const Source& B, T rtol) {
    load_x(B);
    // One column (a single constraint row, or a single coordinate) has its SVD in closed form,
    // the column's norm, and the Jacobi loop does no rotation: cheaper than QR and its bound.
    if constexpr (XC > 1) {
      if (xc() > 1 && factor_qr(rtol)) return;  // lanes: always, unsolved_ saying where it failed
      load_x(B);                                // QR's reflectors overwrote it
    }
    qr_ = false;
    v_ = Mat<T, XC, XC>::identity();
    if constexpr (kLanes<T>) {
      sweeps_ = 0;  // one column here: already orthogonal
    } else {
      sweeps_ = jacobi_sweeps(x_, v_);
    }
    keep_singular_values(column_norms(x_), rtol);
  }

  // x_ = X: B, or B^T when transposed().
  template <class Source>
  UKES_HD void load_x(const Source& B) {
    if (transposed()) {
      write_entries(B, [this](int r, int c) -> T& { return x_(c, r); });
    } else {
      write_entries(B, [this](int r, int c) -> T& { return x_(r, c); });
    }
  }
  template <class At>
  UKES_HD static void write_entries(const Mat<T, R, C>& B, At&& at) {
    UKES_LANE_UNROLL
    for (int r = 0; r < R; ++r) {
      UKES_LANE_UNROLL
      for (int c = 0; c < C; ++c) at(r, c) = B(r, c);
    }
  }
  template <class Source, class At>
  UKES_HD static void write_entries(const Source& B, At&& at) {
    B.write(at);
  }

  UKES_HD void take_svd(const Factors& f, T rtol) {
    qr_ = false;
    x_ = f.W;
    v_ = f.V;
    sweeps_ = f.sweeps;
    keep_singular_values(f.sigma, rtol);
  }

  // The rank rule over the singular values of the factors in x_ and v_: e_, rank_, conditioning_.
  UKES_HD void keep_singular_values(const Vec<T, XC>& sigma, T rtol) {
    T s_max = T(0);
    UKES_LANE_UNROLL
    for (int k = 0; k < XC; ++k) s_max = max_of(s_max, sigma[k]);
    const T cutoff = rtol * s_max;
    rank_ = 0;
    T s_min_kept = s_max;
    UKES_LANE_UNROLL
    for (int k = 0; k < XC; ++k) {
      const T s = sigma[k];
      const MaskOf<T> keep = (s > cutoff) && (s > T(0));
      if constexpr (kLanes<T>) {
        e_[k] = pick(keep, T(1) / (s * s), T(0));
        s_min_kept = pick(keep, min_of(s_min_kept, s), s_min_kept);
        if (all_lanes(keep)) {
          ++rank_;
        } else {
          unsolved_ = unsolved_ || keep;  // a lane of a higher rank than the others
        }
      } else if (keep) {
        // A plain branch for a scalar: the GPU's kernels divide only for the values kept
        // (selecting between both cost TwoRodPendulum's fused FP64 RK4 kernel 50 registers).
        e_[k] = T(1) / (s * s);
        ++rank_;
        s_min_kept = min_of(s_min_kept, s);
      } else {
        e_[k] = T(0);
      }
    }
    conditioning_ = rank_ > 0 ? s_min_kept / s_max : T(1);
  }

  // Householder QR of X, in x_ on entry, in place (LAPACK's layout: reflector k's vector v on and
  // below the diagonal of column k, R strictly above it, 1 / R's diagonal in d_, 2 / v^T v in e_,
  // 0 for a reflector that is the identity). Returns false, leaving x_ to be written again for the
  // SVD, unless X has provably full column rank with kappa_lb above both rtol and the
  // exact-conditioning floor.
  UKES_HD bool factor_qr(T rtol) {
    T r_fro2 = T(0);
    UKES_LANE_UNROLL
    for (int k = 0; k < UKES_X_COLS; ++k) {
      T below2 = T(0);  // squared norm of column k below the diagonal
      UKES_LANE_UNROLL
      for (int r = k + 1; r < UKES_X_ROWS; ++r) below2 += x_(r, k) * x_(r, k);
      const T xkk = x_(k, k);
      const T norm2 = xkk * xkk + below2;
      const T norm = sqrt(norm2);
      if constexpr (!kLanes<T>) {
        if (!(norm > T(0)) || !isfinite(norm)) return false;  // rank-deficient or non-finite
      }  // lanes go on: such a lane's bound below is NaN or 0, and fails
      r_fro2 += norm2;
      const MaskOf<T> triangular = below2 == T(0);
      if (all_lanes(triangular)) {
        // Column k is triangular already: the reflector is the identity (LAPACK's tau = 0), and
        // R(k, k) = x_kk. Constraint rows that are orthogonal in the metric of M (a diagonal M
        // with rows on distinct coordinates) make every column so.
        d_[k] = T(1) / xkk;
        e_[k] = T(0);
        continue;
      }
      // R(k, k) gets the sign opposite to x_kk so that v_0 = x_kk - R(k, k) does not cancel.
      T rkk;
      if constexpr (kLanes<T>) {
        rkk = pick(xkk > T(0), -norm, norm);
      } else {
        rkk = xkk > T(0) ? -norm : norm;
      }
      const T v0 = xkk - rkk;
      const T beta = T(1) / (norm * abs(v0));  // 2 / v^T v, with v^T v = 2 norm |v0|
      // The solves multiply: one division per column. A lane whose column is triangular takes
      // the identity, as above (e_ 0 then leaves the columns right of it as they are).
      if constexpr (kLanes<T>) {
        x_(k, k) = pick(triangular, xkk, v0);
        d_[k] = pick(triangular, T(1) / xkk, T(1) / rkk);
        e_[k] = pick(triangular, T(0), beta);
      } else {
        x_(k, k) = v0;
        d_[k] = T(1) / rkk;
        e_[k] = beta;
      }
      UKES_LANE_UNROLL
      for (int j = k + 1; j < UKES_X_COLS; ++j) {
        T s = T(0);
        UKES_LANE_UNROLL
        for (int r = k; r < UKES_X_ROWS; ++r) s += x_(r, k) * x_(r, j);
        if (all_lanes(s == T(0))) continue;  // column j is orthogonal to v already (rows often are)
        if constexpr (kLanes<T>) {
          s *= e_[k];
        } else {
          s *= beta;
        }
        UKES_LANE_UNROLL
        for (int r = k; r < UKES_X_ROWS; ++r) x_(r, j) -= s * x_(r, k);
      }
    }
    // |R|_F and |R^-1|_F (column k of R^-1 by back substitution on e_k; for a diagonal R, the
    // reciprocals of its diagonal).
    T off2 = T(0);
    UKES_LANE_UNROLL
    for (int k = 1; k < UKES_X_COLS; ++k) {
      UKES_LANE_UNROLL
      for (int i = 0; i < k; ++i) off2 += x_(i, k) * x_(i, k);
    }
    r_fro2 += off2;
    // A diagonal R (in every lane: in the others the back substitution adds exact zeros).
    const bool diagonal = all_lanes(off2 == T(0));
    T rinv_fro2 = T(0);
    UKES_LANE_UNROLL
    for (int k = 0; k < UKES_X_COLS && diagonal; ++k) rinv_fro2 += d_[k] * d_[k];
    UKES_LANE_UNROLL
    for (int k = 0; k < UKES_X_COLS && !diagonal; ++k) {
      Vec<T, XC> y;
      y[k] = d_[k];
      rinv_fro2 += y[k] * y[k];
      UKES_LANE_UNROLL
      for (int i = k - 1; i >= 0; --i) {
        T s = T(0);
        UKES_LANE_UNROLL
        for (int l = i + 1; l <= k; ++l) s += x_(i, l) * y[l];
        y[i] = -s * d_[i];
        rinv_fro2 += y[i] * y[i];
      }
    }
    const T kappa_lb = T(1) / sqrt(r_fro2 * rinv_fro2);
    const MaskOf<T> proven = kappa_lb > max_of(rtol, exact_conditioning_floor<T>());
    if constexpr (kLanes<T>) {
      unsolved_ = !proven;
    } else if (!proven) {
      return false;
    }
    qr_ = true;
    rank_ = xc();
    conditioning_ = kappa_lb;
    sweeps_ = 0;
    return true;
  }

  // v_k^T z over rows k.., then z -= (2 / v^T v) (v_k^T z) v_k: applies reflector k to z.
  UKES_HD void reflect(int k, Vec<T, XR>& z) const {
    if (all_lanes(e_[k] == T(0))) return;  // the identity
    T s = T(0);
    UKES_LANE_UNROLL
    for (int r = k; r < UKES_X_ROWS; ++r) s += x_(r, k) * z[r];
    s *= e_[k];
    UKES_LANE_UNROLL
    for (int r = k; r < UKES_X_ROWS; ++r) z[r] -= s * x_(r, k);
  }

  UKES_HD Vec<T, C> apply_qr(const Vec<T, R>& r) const {
    if (transposed()) {
      // B = R^T Q^T: B^+ r = Q [R^-T r; 0] (R^T is lower triangular: forward substitution).
      Vec<T, XR> z = Vec<T, XR>::zero();
      UKES_LANE_UNROLL
      for (int i = 0; i < UKES_X_COLS; ++i) {
        T s = r[i];
        UKES_LANE_UNROLL
        for (int k = 0; k < i; ++k) s -= x_(k, i) * z[k];
        z[i] = s * d_[i];
      }
      UKES_LANE_UNROLL
      for (int k = UKES_X_COLS - 1; k >= 0; --k) reflect(k, z);
      return resized<C>(z);
    } else {
      // B = Q R: B^+ r = R^-1 (Q^T r)[0 .. C) (back substitution).
      Vec<T, XR> y = resized<XR>(r);
      UKES_LANE_UNROLL
      for (int k = 0; k < UKES_X_COLS; ++k) reflect(k, y);
      Vec<T, C> x;
      if constexpr (kPadded) x = Vec<T, C>::zero();
      UKES_LANE_UNROLL
      for (int i = UKES_X_COLS - 1; i >= 0; --i) {
        T s = y[i];
        UKES_LANE_UNROLL
        for (int k = i + 1; k < UKES_X_COLS; ++k) s -= x_(i, k) * x[k];
        x[i] = s * d_[i];
      }
      return x;
    }
  }

  // A vector of one length as another (they differ only in the unpadded transposed case, where
  // the lengths are R = XC and C = XR; padded buckets are square).
  template <int L, int K>
  UKES_HD static Vec<T, L> resized(const Vec<T, K>& v) {
    if constexpr (L == K) {
      return v;
    } else {
      Vec<T, L> out;
      UKES_LANE_UNROLL
      for (int i = 0; i < L; ++i) out[i] = i < K ? v[i] : T(0);
      return out;
    }
  }

  // Storage shared by the two factorizations (registers are what the GPU kernel runs short of):
  //   SVD: W = X V in x_, V in v_, 1/s^2 of kept singular values (else 0) in e_;
  //   QR:  x_, d_ and e_ as factor_qr says; v_ unused.
  // (v_ and d_ start zeroed: each factorization leaves the other's part unset.)
  Mat<T, XR, XC> x_;
  Mat<T, XC, XC> v_{};
  Vec<T, XC> d_{};
  Vec<T, XC> e_;
  bool qr_ = false;
  int rank_ = 0;
  int sweeps_ = 0;
  T conditioning_ = T(1);
  MaskOf<T> unsolved_ = MaskOf<T>(false);
  // Padded only: the active sizes of X and its orientation.
  bool transposed_ = false;
  int xr_ = XR;
  int xc_ = XC;
};

template <class T, int R, int C>
UKES_HD Mat<T, C, R> pinv(const Mat<T, R, C>& B, T rtol = default_rank_rtol<T>(R, C)) {
  return PseudoInverse<T, R, C>(B, rtol).matrix();
}

}  // namespace ukes

#undef UKES_X_ROWS
#undef UKES_X_COLS
