// The team factorizations of the warp-per-system path (kernels/staged/team_factorizations.hpp),
// run on a 32-lane ThreadTeam (one thread per lane, kernels/backend/host_gpu/thread_team.hpp):
//  - per system, they write exactly what CpuStagedExecutor's factor_mass / factor_constraints
//    write (potrfBatched's and gesvdjBatched's buffers and conventions), failures included, and end
//    with a sync;
//  - the pseudoinverse that the combine step builds from their U, S, V (factors_from_svd)
//    satisfies the four Penrose conditions, for square, wide and tall B, full rank and deficient;
//  - the staged path with them in place of the CPU executor's loops agrees with the fused path for
//    every catalogue model (RK4 / DOPRI5, FP64 / FP32, the bounds of staged_vs_fused_test.cpp),
//    and fails as it does on the unreachable SCARA arms of staged_failures_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend/host_gpu/thread_team.hpp"
#include "kernels/models/catalogue.hpp"
#include "kernels/staged/team_factorizations.hpp"
#include "staged/staged_support.hpp"
#include "support/eigen_interop.hpp"

namespace ukes {
namespace {

using namespace ukes::testing;
using host_gpu::ThreadTeam;
using Lane = ThreadTeam::Lane;

constexpr int kWarp = 32;

// The CPU executor with its two batched factorizations done by a team per system, as the warp
// kernel does them (one team for the batch, looping over the systems). Counts the calls after
// which a lane's last collective was not a sync (the functions' closing-sync contract).
template <class Model, class T>
class TeamStagedExecutor : public CpuStagedExecutor<Model, T> {
  using Workspace = StagedWorkspace<Model, T>;

 public:
  explicit TeamStagedExecutor(int count) : CpuStagedExecutor<Model, T>(count) {}

  void factor_mass() {
    per_system([](const Lane& lane, const Workspace& ws, int i) { team_factor_mass(lane, ws, i); });
  }
  void factor_constraints() {
    per_system(
        [](const Lane& lane, const Workspace& ws, int i) { team_factor_constraints(lane, ws, i); });
  }
  int unsynced_calls() const { return unsynced_; }

 private:
  template <class F>
  void per_system(const F& f) {
    const Workspace& ws = this->workspace();
    team_.run([&](const Lane& lane) {
      for (int i = 0; i < ws.count; ++i) {
        f(lane, ws, i);
        if (lane.last_collective() != ThreadTeam::Collective::kSync) ++unsynced_;
      }
    });
  }

  ThreadTeam team_{kWarp};
  std::atomic<int> unsynced_{0};
};

template <class T>
constexpr double eps_of() {
  return std::numeric_limits<T>::epsilon();
}

// |a - b| / |b| over two buffers (Frobenius).
template <class T>
double relative_difference(const T* a, const T* b, int size) {
  double d2 = 0.0, n2 = 0.0;
  for (int k = 0; k < size; ++k) {
    d2 += (double(a[k]) - double(b[k])) * (double(a[k]) - double(b[k]));
    n2 += double(b[k]) * double(b[k]);
  }
  return n2 > 0.0 ? std::sqrt(d2 / n2) : std::sqrt(d2);
}

// ---- factor_mass -----------------------------------------------------------------------------

// Three systems: SPD with a marked strict upper triangle, SPD, indefinite (a negative pivot).
template <class Model, class T>
void check_factor_mass(std::uint64_t seed) {
  constexpr int n = Model::kN;
  SCOPED_TRACE(std::string(Model::kName) + (sizeof(T) == 8 ? " double" : " float"));
  constexpr int kCount = 3;
  CpuStagedExecutor<Model, T> cpu(kCount);
  TeamStagedExecutor<Model, T> team(kCount);
  std::mt19937_64 rng(seed);
  std::vector<T> input(std::size_t(kCount) * n * n);
  for (int i = 0; i < kCount; ++i) {
    Mat<T, n, n> M = from_eigen<T, n, n>(random_spd(n, 0.1, rng));
    for (int r = 0; r < n; ++r)
      for (int c = r + 1; c < n; ++c) M(r, c) = T(1000 + r * n + c);  // not M's: must survive
    if (i == 2) M(n - 1, n - 1) = T(-1);
    store_column_major(M, input.data() + std::size_t(i) * n * n);
  }
  for (const auto* ws : {&cpu.workspace(), &team.workspace()}) {
    std::copy(input.begin(), input.end(), ws->mass);
    std::fill(ws->mass_info, ws->mass_info + kCount, -1);
  }
  cpu.factor_mass();
  team.factor_mass();
  EXPECT_EQ(team.unsynced_calls(), 0);
  const auto& c = cpu.workspace();
  const auto& t = team.workspace();
  for (int i = 0; i < kCount; ++i) {
    SCOPED_TRACE("system " + std::to_string(i));
    EXPECT_EQ(c.mass_info[i], i == 2 ? 1 : 0);
    EXPECT_EQ(t.mass_info[i], c.mass_info[i]);
    const T* in = input.data() + std::size_t(i) * n * n;
    for (int col = 0; col < n; ++col) {
      for (int r = 0; r < col; ++r) EXPECT_EQ(t.mass_of(i)[col * n + r], in[col * n + r]);
      if (i == 2) {  // a failed factorization leaves the buffer as it was
        for (int r = col; r < n; ++r) EXPECT_EQ(t.mass_of(i)[col * n + r], in[col * n + r]);
      }
    }
    EXPECT_LE(relative_difference(t.mass_of(i), c.mass_of(i), n * n), 8 * eps_of<T>());
  }
}

TEST(TeamFactorMass, WritesWhatTheCpuExecutorWrites) {
  check_factor_mass<models::FourBar, double>(1);
  check_factor_mass<models::Swarm, double>(2);
  check_factor_mass<models::Scara, float>(3);
  check_factor_mass<models::FourBar, float>(4);
}

// ---- factor_constraints ----------------------------------------------------------------------

// A random m x n matrix of the given rank (product of Gaussian factors).
Eigen::MatrixXd random_of_rank(int rows, int cols, int rank, std::mt19937_64& rng) {
  if (rank == 0) return Eigen::MatrixXd::Zero(rows, cols);
  return gaussian(rows, rank, rng) * gaussian(rank, cols, rng);
}

// The same u, s, v as the CPU executor, for full-rank B (the singular vectors are then unique up
// to the sign both take from the same sweeps).
template <class Model, class T>
void check_factor_constraints_like_cpu(std::uint64_t seed) {
  constexpr int n = Model::kN;
  constexpr int m = kRows<Model>;
  constexpr int s = m < n ? m : n;
  SCOPED_TRACE(std::string(Model::kName) + (sizeof(T) == 8 ? " double" : " float"));
  constexpr int kCount = 3;
  CpuStagedExecutor<Model, T> cpu(kCount);
  TeamStagedExecutor<Model, T> team(kCount);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < kCount; ++i) {
    const Mat<T, m, n> B = from_eigen<T, m, n>(gaussian(m, n, rng));
    store_column_major(B, cpu.workspace().b_of(i));
    store_column_major(B, team.workspace().b_of(i));
  }
  // Stale contents that must be overwritten (the zero columns included).
  for (const auto* ws : {&cpu.workspace(), &team.workspace()}) {
    std::fill(ws->u, ws->u + kCount * m * m, T(7));
    std::fill(ws->v, ws->v + kCount * n * n, T(7));
    std::fill(ws->s, ws->s + kCount * s, T(7));
  }
  cpu.factor_constraints();
  team.factor_constraints();
  EXPECT_EQ(team.unsynced_calls(), 0);
  const auto& c = cpu.workspace();
  const auto& t = team.workspace();
  const double tol = sizeof(T) == 8 ? 1e-13 : 1e-5;
  for (int i = 0; i < kCount; ++i) {
    SCOPED_TRACE("system " + std::to_string(i));
    EXPECT_LE(relative_difference(t.s_of(i), c.s_of(i), s), tol);
    EXPECT_LE(relative_difference(t.u_of(i), c.u_of(i), m * m), tol);
    EXPECT_LE(relative_difference(t.v_of(i), c.v_of(i), n * n), tol);
    // Columns beyond the singular vectors are zero.
    for (int k = s; k < m; ++k)
      for (int r = 0; r < m; ++r) EXPECT_EQ(t.u_of(i)[k * m + r], T(0));
    for (int k = s; k < n; ++k)
      for (int r = 0; r < n; ++r) EXPECT_EQ(t.v_of(i)[k * n + r], T(0));
  }
}

TEST(TeamFactorConstraints, WritesWhatTheCpuExecutorWrites) {
  check_factor_constraints_like_cpu<models::FourBar, double>(11);  // 8 x 9: wide
  check_factor_constraints_like_cpu<models::Swarm, double>(12);    // 10 x 10
  check_factor_constraints_like_cpu<models::Scara, double>(13);    // 4 x 4
  check_factor_constraints_like_cpu<models::SliderCrank, double>(14);
  check_factor_constraints_like_cpu<models::Duffing, double>(15);  // 1 x 2
  check_factor_constraints_like_cpu<models::FourBar, float>(16);
}

// A shape only: the workspace needs n and the rows, nothing else of a model.
template <int M, int N>
struct Shape {
  static constexpr int kN = N;
  static constexpr int kPositionRows = M;
  static constexpr int kVelocityRows = 0;
};

// Host buffers for `count` systems of a shape.
template <class Model, class T>
struct ShapeWorkspace {
  static constexpr int n = Model::kN, m = kRows<Model>, s = m < n ? m : n;
  std::vector<T> b, u, v, sv;
  StagedWorkspace<Model, T> ws;
  explicit ShapeWorkspace(int count)
      : b(std::size_t(count) * m * n),
        u(std::size_t(count) * m * m),
        v(std::size_t(count) * n * n),
        sv(std::size_t(count) * s) {
    ws.count = count;
    ws.b = b.data();
    ws.u = u.data();
    ws.v = v.data();
    ws.s = sv.data();
  }
};

struct Penrose {
  double axa, xax, ax_sym, xa_sym;
};

Penrose penrose(const Eigen::MatrixXd& A, const Eigen::MatrixXd& X) {
  const double na = std::max(A.norm(), 1e-300), nx = std::max(X.norm(), 1e-300);
  const Eigen::MatrixXd AX = A * X, XA = X * A;
  return {(A * X * A - A).norm() / na, (X * A * X - X).norm() / nx, (AX - AX.transpose()).norm(),
          (XA - XA.transpose()).norm()};
}

// B of every rank 0..min(m, n), factored by the team; B^+ from the buffers exactly as the combine
// step builds it. Penrose residuals within 8 max(m, n) eps times the kept part's conditioning / 10
// (as tests/linalg/pinv_test.cpp), the rank the constructed one, and B^+ the fused path's.
template <int M, int N>
void check_penrose(std::uint64_t seed) {
  using Model = Shape<M, N>;
  using Pinv = PseudoInverse<double, M, N>;
  constexpr int s = M < N ? M : N;
  SCOPED_TRACE(std::to_string(M) + "x" + std::to_string(N));
  std::mt19937_64 rng(seed);
  ShapeWorkspace<Model, double> buffers(s + 1);
  const StagedWorkspace<Model, double>& ws = buffers.ws;
  std::vector<Mat<double, M, N>> Bs;
  for (int rank = 0; rank <= s; ++rank) {
    Bs.push_back(from_eigen<double, M, N>(random_of_rank(M, N, rank, rng)));
    if (rank == s && M > 1) {  // full rank but for a duplicated row: rank min(m - 1, n)
      for (int c = 0; c < N; ++c) Bs.back()(M - 1, c) = Bs.back()(0, c);
    }
    store_column_major(Bs.back(), ws.b_of(rank));
  }
  ThreadTeam team(kWarp);
  team.run([&](const Lane& lane) {
    for (int i = 0; i < ws.count; ++i) team_factor_constraints(lane, ws, i);
  });
  const double rtol = default_rank_rtol<double>(M, N);
  for (int i = 0; i < ws.count; ++i) {
    const int expected_rank = i == s && M > 1 ? std::min(M - 1, N) : i;
    SCOPED_TRACE("rank " + std::to_string(expected_rank));
    const double* U = ws.u_of(i);
    const double* S = ws.s_of(i);
    const double* V = ws.v_of(i);
    const Pinv P(Pinv::factors_from_svd([U](int r, int k) { return U[k * M + r]; },
                                        [S](int k) { return S[k]; },
                                        [V](int c, int k) { return V[k * N + c]; }),
                 rtol);
    EXPECT_EQ(P.rank(), expected_rank);
    const Eigen::MatrixXd A = to_eigen(Bs[std::size_t(i)]);
    const Eigen::MatrixXd X = to_eigen(P.matrix());
    if (expected_rank == 0) {
      EXPECT_EQ(X.norm(), 0.0);
      continue;
    }
    const double kappa = 1.0 / double(P.conditioning());
    const double tol = 8.0 * std::max(M, N) * eps_of<double>() * std::max(1.0, kappa / 10.0);
    const Penrose p = penrose(A, X);
    EXPECT_LE(p.axa, tol) << "A X A = A";
    EXPECT_LE(p.xax, tol) << "X A X = X";
    EXPECT_LE(p.ax_sym, tol) << "(A X)^T = A X";
    EXPECT_LE(p.xa_sym, tol) << "(X A)^T = X A";
    const Eigen::MatrixXd fused = to_eigen(Pinv(Bs[std::size_t(i)], rtol).matrix());
    EXPECT_LE((X - fused).norm(), 1e-12 * std::max(1.0, kappa / 100.0) * fused.norm());
  }
}

TEST(TeamFactorConstraints, PseudoInverseFromTeamFactorsSatisfiesPenrose) {
  check_penrose<4, 4>(21);
  check_penrose<3, 7>(22);  // wide: X = B^T
  check_penrose<7, 3>(23);  // tall: X = B, zero columns in U
  check_penrose<8, 9>(24);
  check_penrose<10, 10>(25);
  check_penrose<32, 5>(26);  // a full warp of rows
  check_penrose<1, 2>(27);
}

// ---- the staged path with team factorizations ------------------------------------------------

// The staged path with the team factorizations, every call of which ends with a sync.
template <class Model, class T>
PathRuns run_fused_and_team(const Batch& batch, const EnsembleSettings& e,
                            const std::vector<std::int32_t>& traj_ids) {
  return run_both_paths<Model, T, TeamStagedExecutor<Model, T>>(
      batch, e, traj_ids,
      [](const TeamStagedExecutor<Model, T>& ex) { EXPECT_EQ(ex.unsynced_calls(), 0); });
}

// Fewer systems and a far shorter horizon than staged_vs_fused_test.cpp, the same bounds: every
// collective of the emulated warp is a barrier of 32 threads (some 40 us on two cores), and a
// stage of four_bar or swarm takes several hundred of them. Every model still goes through tens
// of right-hand sides (RK4: 4 steps; DOPRI5: 4 or more), each with both team factorizations.
constexpr int kSystems = 2;
const std::vector<std::int32_t> kRecorded = {0, 1};
constexpr double kHorizon = 0.01;

EnsembleSettings settings_for(const ModelInfo& m, Method method, Precision precision) {
  EnsembleSettings e = EnsembleSettings::for_model(m);
  e.method = method;
  e.precision = precision;
  e.t_end = std::min(m.t_end, kHorizon);
  e.samples = 3;
  if (method == Method::kRk4) e.dt = e.t_end / 4;
  if (precision == Precision::kFp32) e.rtol = e.atol = 1e-5;
  return e;
}

template <class T, class Check>
void for_every_model(const char* what, Method method, const Check& check) {
  const Precision precision = sizeof(T) == 8 ? Precision::kFp64 : Precision::kFp32;
  for_each_model([&]<class M>() {
    const ModelInfo* info = find_model(M::kName);
    ASSERT_NE(info, nullptr) << M::kName;
    SCOPED_TRACE(M::kName);
    const EnsembleSettings e = settings_for(*info, method, precision);
    const PathRuns r = run_fused_and_team<M, T>(perturbed_batch(*info, kSystems), e, kRecorded);
    for (int i = 0; i < kSystems; ++i) {
      EXPECT_EQ(r.fused.status[i], 0);
      EXPECT_GT(r.fused.steps[i], 0);
    }
    const Agreement a = compare_runs(r.fused, r.staged);
    std::printf("%-8s %-24s state %.1e  maxima %.1e  trajectory %.1e  steps %lld\n", what, M::kName,
                a.state, a.maxima, a.trajectory, static_cast<long long>(r.fused.steps[0]));
    EXPECT_EQ(a.status_mismatches, 0);
    check(a);
  });
}

TEST(TeamStagedCpu, Rk4Fp64AgreesWithFusedToRoundingForEveryModel) {
  for_every_model<double>("rk4/64", Method::kRk4, [](const Agreement& a) {
    EXPECT_EQ(a.step_mismatches, 0);
    EXPECT_EQ(a.time_mismatches, 0);
    EXPECT_LE(a.state, 1e-12);
    EXPECT_LE(a.maxima, 1e-12);
    EXPECT_LE(a.trajectory, 1e-12);
  });
}

TEST(TeamStagedCpu, Dopri5Fp64AgreesWithFusedWithinTolerancesForEveryModel) {
  for_every_model<double>("dopri5/64", Method::kDopri5, [](const Agreement& a) {
    EXPECT_EQ(a.time_mismatches, 0);
    EXPECT_LE(a.state, 1e-7);
    EXPECT_LE(a.maxima, 1e-7);
    EXPECT_LE(a.trajectory, 1e-7);
  });
}

TEST(TeamStagedCpu, Rk4Fp32AgreesWithFusedForEveryModel) {
  for_every_model<float>("rk4/32", Method::kRk4, [](const Agreement& a) {
    EXPECT_EQ(a.step_mismatches, 0);
    EXPECT_EQ(a.time_mismatches, 0);
    EXPECT_LE(a.state, 1e-3);
    EXPECT_LE(a.maxima, 1e-3);
    EXPECT_LE(a.trajectory, 1e-3);
  });
}

TEST(TeamStagedCpu, Dopri5Fp32AgreesWithFusedWithinTolerancesForEveryModel) {
  for_every_model<float>("dopri5/32", Method::kDopri5, [](const Agreement& a) {
    EXPECT_EQ(a.time_mismatches, 0);
    EXPECT_LE(a.state, 1e-3);
    EXPECT_LE(a.maxima, 1e-3);
    EXPECT_LE(a.trajectory, 1e-3);
  });
}

// SCARA arms whose helix centre is out of reach (staged_failures_test.cpp): the constraint
// Jacobian loses rank and fixed-step RK4 blows up within a step (`nonfinite`), on both paths at
// the same step; the reachable arm of the batch integrates to the end.
TEST(TeamStagedCpu, UnreachableScaraFailsAsOnTheFusedPath) {
  const ModelInfo* info = find_model("scara");
  ASSERT_NE(info, nullptr);
  EnsembleSettings e = EnsembleSettings::for_model(*info);
  e.method = Method::kRk4;
  e.dt = 1e-3;
  e.t_end = 0.12;  // system 1 fails at t = 0.108 (staged_failures_test.cpp)
  e.samples = 7;
  Batch b = perturbed_batch(*info, 2);
  const int yc = info->param_index("yc");
  ASSERT_GE(yc, 0);
  b.param(yc, 1) = 0.6;  // > l1 + l2 = 0.45
  const PathRuns runs = run_fused_and_team<models::Scara, double>(b, e, {0, 1});
  for (int i = 0; i < b.count; ++i) {
    const Status expected = i == 1 ? Status::kNonfinite : Status::kOk;
    std::printf("scara system %d: fused %s at t = %.6g, team %s at t = %.6g\n", i,
                status_name(static_cast<Status>(runs.fused.status[i])), runs.fused.t[i],
                status_name(static_cast<Status>(runs.staged.status[i])), runs.staged.t[i]);
    EXPECT_EQ(runs.fused.status[i], static_cast<int>(expected)) << i;
    EXPECT_EQ(runs.staged.status[i], static_cast<int>(expected)) << i;
    EXPECT_EQ(runs.staged.t[i], runs.fused.t[i]) << i;  // fixed steps: the same step fails
  }
  EXPECT_LT(runs.staged.t[1], e.t_end);
  for (int k = 0; k < e.samples; ++k)
    EXPECT_EQ(std::isnan(runs.fused.traj_q_at(1, k, 0)), std::isnan(runs.staged.traj_q_at(1, k, 0)))
        << "sample " << k;
  EXPECT_TRUE(std::isnan(runs.staged.traj_q_at(1, e.samples - 1, 0)));
}

}  // namespace
}  // namespace ukes
