// Rank-revealing Moore–Penrose pseudoinverse by one-sided (Hestenes) Jacobi SVD.
//
// Jacobi orthogonalization is branch-light, needs no workspace beyond the matrix itself, computes
// small singular values to high relative accuracy and is what cuSOLVER's batched gesvdj does on
// the GPU, so both backends share one algorithm.
//
// For X (R x C) the sweeps find an orthogonal V (C x C) such that the columns of W = X V are
// mutually orthogonal; then X = U S V^T with W = U S and
//     X^+ = V S^+ U^T = V diag(1/s_k^2) W^T   (over the kept singular values s_k).
// We orthogonalize whichever of B or B^T has fewer columns, so the work scales with min(R, C)^2.
//
// Rank tolerance: a singular value s_k is kept when s_k > rtol * s_max. The default
// rtol = max(R, C) * eps(T) is the convention of LAPACK-based tools (numpy.linalg.matrix_rank,
// MATLAB rank/pinv); a caller may pass its own. A zero matrix has rank 0 and pseudoinverse 0.
#pragma once

#include "kernels/linalg/small_matrix.hpp"

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
    for (int k = 0; k < C; ++k) s = max_of(s, sigma[k]);
    return s;
  }
};

template <class T, int R, int C>
struct JacobiSvd : SvdFactors<T, R, C> {
  using SvdFactors<T, R, C>::W;
  using SvdFactors<T, R, C>::V;
  using SvdFactors<T, R, C>::sigma;
  using SvdFactors<T, R, C>::sweeps;

  static constexpr int kMaxSweeps = 40;

  UKES_HD explicit JacobiSvd(const Mat<T, R, C>& X)
      : SvdFactors<T, R, C>{X, Mat<T, C, C>::identity(), Vec<T, C>::zero(), 0} {
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
      for (int k = 0; k < C; ++k) fro2 += X(r, k) * X(r, k);
    const T negligible = tol * tol * fro2;
    for (sweeps = 0; sweeps < kMaxSweeps; ++sweeps) {
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
          // Rotation that zeroes the (i, j) entry of the 2x2 Gram matrix [[alpha, gamma], [gamma,
          // beta]].
          const T zeta = (beta - alpha) / (T(2) * gamma);
          const T t = (zeta >= T(0) ? T(1) : T(-1)) / (abs(zeta) + sqrt(T(1) + zeta * zeta));
          const T c = T(1) / sqrt(T(1) + t * t);
          const T s = c * t;
          for (int r = 0; r < R; ++r) {
            const T wi = W(r, i), wj = W(r, j);
            W(r, i) = c * wi - s * wj;
            W(r, j) = s * wi + c * wj;
          }
          for (int r = 0; r < C; ++r) {
            const T vi = V(r, i), vj = V(r, j);
            V(r, i) = c * vi - s * vj;
            V(r, j) = s * vi + c * vj;
          }
        }
      }
      if (!rotated) break;
    }
    for (int k = 0; k < C; ++k) {
      T s2 = T(0);
      for (int r = 0; r < R; ++r) s2 += W(r, k) * W(r, k);
      sigma[k] = sqrt(s2);
    }
  }
};

template <class T>
UKES_HD constexpr T default_rank_rtol(int rows, int cols) {
  return T(rows > cols ? rows : cols) * Epsilon<T>::value;
}

// The pseudoinverse of a fixed B (R x C), factored once and applied to any number of vectors.
template <class T, int R, int C>
class PseudoInverse {
 public:
  // Orthogonalize the columns of B when it is tall or square, of B^T when it is wide: the
  // factors are those of X = B, resp. X = B^T.
  static constexpr bool kTransposed = R < C;
  static constexpr int XR = kTransposed ? C : R;
  static constexpr int XC = kTransposed ? R : C;
  using Factors = SvdFactors<T, XR, XC>;

  UKES_HD explicit PseudoInverse(const Mat<T, R, C>& B, T rtol = default_rank_rtol<T>(R, C))
      : PseudoInverse(Factors(JacobiSvd<T, XR, XC>(make_x(B))), rtol) {}

  // From the SVD of X computed elsewhere (factors_from_svd): the same rank rule, the same apply.
  UKES_HD PseudoInverse(const Factors& x_svd, T rtol) : svd_(x_svd) {
    const T s_max = svd_.sigma_max();
    const T cutoff = rtol * s_max;
    rank_ = 0;
    T s_min_kept = s_max;
    for (int k = 0; k < XC; ++k) {
      const T s = svd_.sigma[k];
      if (s > cutoff && s > T(0)) {
        inv_s2_[k] = T(1) / (s * s);
        ++rank_;
        s_min_kept = min_of(s_min_kept, s);
      } else {
        inv_s2_[k] = T(0);
      }
    }
    conditioning_ = rank_ > 0 ? s_min_kept / s_max : T(1);
  }

  UKES_HD int rank() const { return rank_; }
  // Smallest kept singular value over the largest, in (0, 1]: how close B is to losing rank
  // beyond the dependencies already dropped (1 for a zero matrix).
  UKES_HD T conditioning() const { return conditioning_; }
  UKES_HD const Factors& svd() const { return svd_; }

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
    const auto& W = svd_.W;
    const auto& V = svd_.V;
    Vec<T, C> x = Vec<T, C>::zero();
    if constexpr (kTransposed) {
      // X = B^T = U S V^T, so B = V S U^T and B^+ = U S^-1 V^T = W diag(1/s^2) V^T.
      for (int k = 0; k < XC; ++k) {
        if (inv_s2_[k] == T(0)) continue;
        T coef = T(0);
        for (int i = 0; i < R; ++i) coef += V(i, k) * r[i];
        coef *= inv_s2_[k];
        for (int j = 0; j < C; ++j) x[j] += W(j, k) * coef;
      }
    } else {
      // X = B = U S V^T: B^+ = V S^-1 U^T = V diag(1/s^2) W^T.
      for (int k = 0; k < XC; ++k) {
        if (inv_s2_[k] == T(0)) continue;
        T coef = T(0);
        for (int i = 0; i < R; ++i) coef += W(i, k) * r[i];
        coef *= inv_s2_[k];
        for (int j = 0; j < C; ++j) x[j] += V(j, k) * coef;
      }
    }
    return x;
  }

  // The explicit C x R pseudoinverse (tests, assembly of small operators).
  UKES_HD Mat<T, C, R> matrix() const {
    Mat<T, C, R> P;
    for (int i = 0; i < R; ++i) {
      Vec<T, R> e = Vec<T, R>::zero();
      e[i] = T(1);
      const Vec<T, C> col = apply(e);
      for (int j = 0; j < C; ++j) P(j, i) = col[j];
    }
    return P;
  }

 private:
  UKES_HD static Mat<T, XR, XC> make_x(const Mat<T, R, C>& B) {
    if constexpr (kTransposed) {
      return transpose(B);
    } else {
      return B;
    }
  }

  Factors svd_;
  Vec<T, XC> inv_s2_;
  int rank_ = 0;
  T conditioning_ = T(1);
};

template <class T, int R, int C>
UKES_HD Mat<T, C, R> pinv(const Mat<T, R, C>& B, T rtol = default_rank_rtol<T>(R, C)) {
  return PseudoInverse<T, R, C>(B, rtol).matrix();
}

}  // namespace ukes
