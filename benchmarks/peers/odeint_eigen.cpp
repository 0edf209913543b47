// Peer baseline on the CPU: a per-system loop with Boost.Odeint's classical runge_kutta4 at a
// fixed step and the Udwadia-Kalaba acceleration written with Eigen (fixed-size matrices, LLT of
// M, pseudoinverse by CompleteOrthogonalDecomposition or JacobiSVD), over std::threads that pull
// chunks of systems, as our CPU backend does. Models: benchmarks/peers/eigen_models.hpp.
//
//   peer_odeint_eigen --model scara --q0 ic_q0.npy --qd0 ic_qd0.npy --steps 200 --dt 1e-3
//                     --threads 2 --pinv cod --out final_q.npy
// Prints one JSON line (wall time, system-steps/s) like the ensemble driver.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <boost/numeric/odeint.hpp>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/peers/eigen_models.hpp"
#include "benchmarks/peers/npy.hpp"

namespace {

using ukes::bench::NpyMatrix;

enum class PinvKind { kCod, kSvd };

// qdd = a + L^-T (A L^-T)^+ (b_stab - A a), a = M^-1 Q, M = L L^T: the UK equation with the
// Cholesky factor standing for M^1/2 (any factor gives the same qdd).
template <class Model>
Eigen::Matrix<double, Model::kN, 1> uk_acceleration(const typename Model::VecN& q,
                                                    const typename Model::VecN& qd, double t,
                                                    PinvKind pinv) {
  constexpr int n = Model::kN, m = Model::kM;
  const Eigen::LLT<Eigen::Matrix<double, n, n>> llt(Model::mass(q));
  const auto L = llt.matrixL();
  const Eigen::Matrix<double, n, 1> a = llt.solve(Model::force(q, qd, t));
  const auto rows = Model::rows(q, qd, t);
  Eigen::Matrix<double, m, 1> b = rows.b;
  for (int r = 0; r < m; ++r) {
    b[r] -= r < Model::kPositionRows ? Model::kAlpha * rows.rate[r] + Model::kBeta * rows.value[r]
                                     : Model::kAlpha * rows.value[r];
  }
  // B = A L^-T, i.e. B^T = L^-1 A^T.
  const Eigen::Matrix<double, m, n> B = L.solve(rows.A.transpose()).transpose();
  const Eigen::Matrix<double, m, 1> residual = b - rows.A * a;
  Eigen::Matrix<double, n, 1> y;
  if (pinv == PinvKind::kCod) {
    y = Eigen::CompleteOrthogonalDecomposition<Eigen::Matrix<double, m, n>>(B).solve(residual);
  } else {
    y = Eigen::JacobiSVD<Eigen::Matrix<double, m, n>>(B, Eigen::ComputeFullU | Eigen::ComputeFullV)
            .solve(residual);
  }
  return a + L.transpose().solve(y);
}

template <class Model>
using State = std::array<double, 2 * Model::kN>;

// Integrates systems [0, q0.rows) and returns the wall time of the whole parallel loop.
template <class Model>
double integrate_all(const NpyMatrix& q0, const NpyMatrix& qd0, int steps, double dt, int threads,
                     PinvKind pinv, NpyMatrix& q_final) {
  constexpr int n = Model::kN;
  const int count = static_cast<int>(q0.rows);
  q_final.rows = count;
  q_final.cols = n;
  q_final.data.assign(static_cast<std::size_t>(count) * n, 0.0);
  auto rhs = [pinv](const State<Model>& x, State<Model>& dx, double t) {
    typename Model::VecN q, qd;
    for (int j = 0; j < n; ++j) {
      q[j] = x[j];
      qd[j] = x[n + j];
    }
    const auto qdd = uk_acceleration<Model>(q, qd, t, pinv);
    for (int j = 0; j < n; ++j) {
      dx[j] = qd[j];
      dx[n + j] = qdd[j];
    }
  };
  constexpr int kChunk = 16;
  std::atomic<int> next{0};
  auto worker = [&] {
    boost::numeric::odeint::runge_kutta4<State<Model>> stepper;
    for (;;) {
      const int begin = next.fetch_add(kChunk);
      if (begin >= count) return;
      for (int i = begin; i < std::min(count, begin + kChunk); ++i) {
        State<Model> x;
        for (int j = 0; j < n; ++j) {
          x[j] = q0.at(i, j);
          x[n + j] = qd0.at(i, j);
        }
        boost::numeric::odeint::integrate_n_steps(stepper, rhs, x, 0.0, dt, steps);
        for (int j = 0; j < n; ++j) q_final.data[static_cast<std::size_t>(i) * n + j] = x[j];
      }
    }
  };
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int k = 1; k < threads; ++k) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class Fn>
bool dispatch(const std::string& model, Fn&& fn) {
  if (model == "scara") return fn.template operator()<ukes::peers::ScaraEigen>(), true;
  if (model == "four_bar") return fn.template operator()<ukes::peers::FourBarEigen>(), true;
  if (model == "swarm") return fn.template operator()<ukes::peers::SwarmEigen>(), true;
  if (model == "duffing") return fn.template operator()<ukes::peers::DuffingEigen>(), true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Boost.Odeint + Eigen peer: fixed-step RK4 per system, UK acceleration by Eigen"};
  std::string model, q0_path, qd0_path, out_path, pinv_name = "cod";
  int steps = 200, threads = 0, repetitions = 3;
  double dt = 1e-3;
  app.add_option("--model", model)->required();
  app.add_option("--q0", q0_path, "initial positions, .npy [N][n]")->required();
  app.add_option("--qd0", qd0_path, "initial velocities, .npy [N][n]")->required();
  app.add_option("--steps", steps);
  app.add_option("--dt", dt);
  app.add_option("--threads", threads, "0: all hardware threads");
  app.add_option("--repetitions", repetitions, "timed runs; the median is reported");
  app.add_option("--pinv", pinv_name)->check(CLI::IsMember({"cod", "svd"}));
  app.add_option("--out", out_path, "final positions, .npy [N][n]");
  CLI11_PARSE(app, argc, argv);
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const PinvKind pinv = pinv_name == "svd" ? PinvKind::kSvd : PinvKind::kCod;

  try {
    const NpyMatrix q0 = ukes::bench::read_npy(q0_path);
    const NpyMatrix qd0 = ukes::bench::read_npy(qd0_path);
    NpyMatrix q_final;
    std::vector<double> walls;
    const bool known = dispatch(model, [&]<class Model>() {
      if (q0.cols != Model::kN || qd0.cols != Model::kN || q0.rows != qd0.rows)
        throw std::runtime_error("initial conditions do not match the model's coordinates");
      for (int rep = 0; rep < std::max(1, repetitions); ++rep)
        walls.push_back(integrate_all<Model>(q0, qd0, steps, dt, threads, pinv, q_final));
    });
    if (!known) {
      std::cerr << "peer_odeint_eigen: no Eigen model for '" << model << "'\n";
      return 2;
    }
    if (!out_path.empty()) ukes::bench::write_npy(out_path, q_final);
    std::vector<double> sorted = walls;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t k = sorted.size() / 2;
    const double wall = sorted.size() % 2 ? sorted[k] : 0.5 * (sorted[k - 1] + sorted[k]);
    const double system_steps = static_cast<double>(q0.rows) * steps;
    std::cout << nlohmann::json{{"impl", "odeint_eigen_" + pinv_name},
                                {"backend", "cpu"},
                                {"model", model},
                                {"n_systems", q0.rows},
                                {"method", "rk4"},
                                {"precision", "fp64"},
                                {"threads", threads},
                                {"dt", dt},
                                {"system_steps", system_steps},
                                {"steps_per_system", steps},
                                {"wall_s", wall},
                                {"wall_s_all", walls},
                                {"systems_per_s", static_cast<double>(q0.rows) / wall},
                                {"system_steps_per_s", system_steps / wall},
                                {"final_q", out_path}}
                     .dump()
              << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "peer_odeint_eigen: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
