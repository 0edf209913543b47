// Floating-point operations per system-step of every catalogue model, counted by running the
// shared code (benchmarks/perf_model/counted_scalar.hpp) at the model's default state: one UK
// right-hand side (mass, forces, constraint form by AD, Cholesky, pseudoinverse, solve), one RK4
// step and one DOPRI5 trial step (stages plus the integrator's own arithmetic). Prints a Markdown
// table; benchmarks/perf_model/README.md turns it into predicted H100 throughput.
//
//   build/benchmarks/op_count [--tsv]
#include <cstdio>
#include <cstring>
#include <string>

#include "benchmarks/perf_model/counted_scalar.hpp"
#include "kernels/integrators/dopri5.hpp"
#include "kernels/integrators/rk4.hpp"
#include "kernels/models/catalogue.hpp"
#include "kernels/uk/dynamics.hpp"

namespace {

using ukes::perf::Counted;
using ukes::perf::op_counts;
using ukes::perf::OpCounts;

template <class Model>
struct CountedSystem {
  static constexpr int kN = Model::kN;
  Counted p[ukes::kParamCount<Model> > 0 ? ukes::kParamCount<Model> : 1];
  ukes::DynamicsSettings<Counted> settings;
  ukes::Vec<Counted, 2 * kN> x;

  CountedSystem() {
    double values[ukes::kParamCount<Model> > 0 ? ukes::kParamCount<Model> : 1] = {};
    for (int k = 0; k < ukes::kParamCount<Model>; ++k) values[k] = Model::kParams[k].value;
    ukes::Vec<double, kN> q, qd;
    Model::initial_state(values, q, qd);
    for (int k = 0; k < ukes::kParamCount<Model>; ++k) p[k] = values[k];
    for (int j = 0; j < kN; ++j) {
      x[j] = q[j];
      x[kN + j] = qd[j];
    }
    settings.alpha = Model::kGains.alpha;
    settings.beta = Model::kGains.beta;
  }

  // x' = (qd, qdd): what the integrators call per stage.
  void operator()(Counted t, const ukes::Vec<Counted, 2 * kN>& state,
                  ukes::Vec<Counted, 2 * kN>& dx) {
    ukes::Vec<Counted, kN> q, qd;
    for (int j = 0; j < kN; ++j) {
      q[j] = state[j];
      qd[j] = state[kN + j];
    }
    const auto e = ukes::evaluate_dynamics<Model, Counted>(Model{}, q, qd, t, p, settings);
    for (int j = 0; j < kN; ++j) {
      dx[j] = qd[j];
      dx[kN + j] = e.qdd[j];
    }
  }
};

// The operations `work` does.
template <class F>
OpCounts counted(F&& work) {
  op_counts() = OpCounts{};
  work();
  return op_counts();
}

struct Row {
  std::string model;
  int n = 0, rows = 0;
  OpCounts rhs, rk4, dopri5;
};

template <class Model>
Row count_model() {
  CountedSystem<Model> sys;
  ukes::Vec<Counted, 2 * Model::kN> k1, y, k7;
  sys(Counted(0.1), sys.x, k1);
  Row row{std::string(Model::kName), Model::kN, ukes::kRows<Model>, {}, {}, {}};
  row.rhs = counted([&] { sys(Counted(0.1), sys.x, k1); });
  row.rk4 = counted([&] { y = ukes::rk4_step(sys, Counted(0.1), sys.x, k1, Counted(1e-3)); });
  row.dopri5 = counted([&] {
    ukes::dopri5_step(sys, Counted(0.1), sys.x, k1, Counted(1e-3), Counted(1e-9), Counted(1e-9), y,
                      k7);
  });
  return row;
}

void print_markdown(const Row& r) {
  const OpCounts& c = r.rhs;
  std::printf("| `%s` | %d, %d | %lld | %lld | %lld | %lld | %lld | %lld | %lld | %lld | %lld |\n",
              r.model.c_str(), r.n, r.rows, static_cast<long long>(c.add),
              static_cast<long long>(c.mul), static_cast<long long>(c.div),
              static_cast<long long>(c.sqrt), static_cast<long long>(c.transcendental),
              static_cast<long long>(c.compare), static_cast<long long>(c.arithmetic()),
              static_cast<long long>(r.rk4.arithmetic()),
              static_cast<long long>(r.dopri5.arithmetic()));
}

void print_tsv(const Row& r) {
  const auto print = [](const char* what, const OpCounts& c) {
    std::printf("\t%s:%lld,%lld,%lld,%lld,%lld,%lld", what, static_cast<long long>(c.add),
                static_cast<long long>(c.mul), static_cast<long long>(c.div),
                static_cast<long long>(c.sqrt), static_cast<long long>(c.transcendental),
                static_cast<long long>(c.compare));
  };
  std::printf("%s\t%d\t%d", r.model.c_str(), r.n, r.rows);
  print("rhs", r.rhs);
  print("rk4", r.rk4);
  print("dopri5", r.dopri5);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const bool tsv = argc > 1 && std::strcmp(argv[1], "--tsv") == 0;
  if (tsv) {
    std::printf("model\tn\trows\t[rhs|rk4|dopri5]:add,mul,div,sqrt,transcendental,compare\n");
  } else {
    std::printf(
        "| model | n, rows | add | mul | div | sqrt | transc. | compare | RHS total | "
        "RK4 step | DOPRI5 trial step |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  }
  ukes::for_each_model(ukes::Catalogue{}, [&]<class Model>() {
    const Row r = count_model<Model>();
    tsv ? print_tsv(r) : print_markdown(r);
  });
  return 0;
}
