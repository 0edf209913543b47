// fuzz_model_definition: the input is the text of a model definition (docs/MODEL_FORMAT.md), as
// RegisterModel receives it and a spec's inline `model` holds it. The parser and validator either
// refuse it with a DefinitionError whose path and reason are printable and bounded, or compile it;
// a compiled program is then run, every segment, on a state of plain numbers and of Jets, where
// AddressSanitizer sees any register, operand or output index the compiler got wrong.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "kernels/autodiff/jet.hpp"
#include "kernels/models/user/compiled_model.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace ukes;

constexpr int kJetVariables = 4;  // coordinates seed gradient slots modulo this

void check_definition_error(const DefinitionError& e) {
  UKES_FUZZ_CHECK_MSG(fuzz::is_printable(e.what()), e.what());
  UKES_FUZZ_CHECK_MSG(std::string(e.what()).size() <= 1024, e.what());
  UKES_FUZZ_CHECK_MSG(e.path.rfind("$", 0) == 0, e.what());
}

// Runs one segment into `outputs` slots, counting every store and checking its index.
template <class S>
void run_segment_checked(const UserModelProgram& program, expr::Segment segment,
                         const expr::Inputs<S, double>& in, int outputs) {
  std::vector<S> out(static_cast<std::size_t>(outputs > 0 ? outputs : 1));
  expr::run_segment<expr::kMaxRegisters>(program.code, segment, in, [&](int k, const S& value) {
    UKES_FUZZ_CHECK_MSG(k >= 0 && k < outputs, "store index out of range");
    out[static_cast<std::size_t>(k)] = value;
  });
}

void run_every_segment(const CompiledUserModel& model) {
  const ModelShape& shape = model.program.shape;
  // The model's parameters, then the slots of the derived ones, filled as a system's kernel does.
  std::vector<double> p(expr::kParameterSlots, 0.0);
  const int params = static_cast<int>(model.definition.parameters.size());
  for (int k = 0; k < params; ++k)
    p[static_cast<std::size_t>(k)] = model.definition.parameters[static_cast<std::size_t>(k)].value;
  expr::run_segment<expr::kMaxRegisters>(
      model.program.code, expr::Segment::kDerived,
      expr::Inputs<double, double>{nullptr, nullptr, 0.0, p.data(), nullptr},
      [&](int k, double value) {
        UKES_FUZZ_CHECK_MSG(k >= params && k < expr::kParameterSlots, "derived slot out of range");
        p[static_cast<std::size_t>(k)] = value;
      });
  std::vector<double> q(static_cast<std::size_t>(shape.n), 0.3), qd(q.size(), -0.7),
      qc(q.size(), 1.1);
  const expr::Inputs<double, double> plain{q.data(), qd.data(), 0.25, p.data(), qc.data()};
  run_segment_checked(model.program, expr::Segment::kMass, plain, shape.n * expr::kMassStride);
  run_segment_checked(model.program, expr::Segment::kForce, plain, shape.n);
  run_segment_checked(model.program, expr::Segment::kNonIdealForce, plain, shape.n);
  run_segment_checked(model.program, expr::Segment::kInitialQ, plain, shape.n);
  run_segment_checked(model.program, expr::Segment::kInitialQd, plain, shape.n);
  using J = Jet<double, kJetVariables>;
  std::vector<J> qj, qdj;
  for (int j = 0; j < shape.n; ++j) {
    qj.push_back(J::variable(0.3, j % kJetVariables, -0.7));
    qdj.push_back(J(-0.7, 0.5, 0.0));
  }
  const expr::Inputs<J, double> jets{qj.data(), qdj.data(), J(0.25, 1.0, 0.0), p.data(), nullptr};
  run_segment_checked(model.program, expr::Segment::kPositionRows, jets, shape.position_rows);
  run_segment_checked(model.program, expr::Segment::kVelocityRows, jets, shape.velocity_rows);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::shared_ptr<const ModelInfo> model;
  try {
    model = make_user_model_info(parse_user_model_text(text));
  } catch (const DefinitionError& e) {
    check_definition_error(e);
    return 0;
  } catch (const std::exception& e) {
    UKES_FUZZ_FAIL("the definition parser threw an exception that is not a DefinitionError",
                   e.what());
  } catch (...) {
    UKES_FUZZ_FAIL("the definition parser threw something that is not a std::exception", "");
  }
  run_every_segment(*model->user);
  return 0;
}
