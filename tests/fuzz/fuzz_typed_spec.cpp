// fuzz_typed_spec: the input is a serialized ukes.v1.RunSpec (the typed spec of SubmitJob);
// inputs that are not one are skipped. spec_json_from_proto, then parse_run_spec with small limits,
// as ukes-server does with a typed spec; the invariants are in fuzz_support.hpp.
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <exception>

#include "service/protocol/spec_proto.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "ukes/v1/ukes.pb.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Protobuf logs every string field that is not UTF-8 before refusing the message: not news.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ukes;
  v1::RunSpec message;
  if (!message.ParseFromArray(data, static_cast<int>(size))) return 0;
  nlohmann::json doc;
  try {
    doc = spec_json_from_proto(message);
  } catch (const SpecError& e) {
    fuzz::check_spec_error(e);
    return 0;
  } catch (const std::exception& e) {
    UKES_FUZZ_FAIL("spec_json_from_proto threw an exception that is not a SpecError", e.what());
  } catch (...) {
    UKES_FUZZ_FAIL("spec_json_from_proto threw something that is not a std::exception", "");
  }
  fuzz::check_spec_document(doc, fuzz::small_options());
  return 0;
}
