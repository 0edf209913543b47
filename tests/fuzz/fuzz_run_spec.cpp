// fuzz_run_spec: the input is the text of a run spec, as `ukes run` reads it from a file and
// ukes-server receives it in spec_json. parse_spec_text, then parse_run_spec with small limits;
// the invariants are in fuzz_support.hpp.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "service/runspec/spec_text.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ukes;
  const std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::json doc;
  try {
    doc = parse_spec_text(text);
  } catch (const SpecError& e) {
    fuzz::check_spec_error(e);
    return 0;
  } catch (const std::exception& e) {
    UKES_FUZZ_FAIL("parse_spec_text threw an exception that is not a SpecError", e.what());
  } catch (...) {
    UKES_FUZZ_FAIL("parse_spec_text threw something that is not a std::exception", "");
  }
  fuzz::check_spec_document(doc, fuzz::small_options());
  return 0;
}
