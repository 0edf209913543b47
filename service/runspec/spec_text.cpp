#include "service/runspec/spec_text.hpp"

#include <set>
#include <string>
#include <vector>

#include "service/runspec/run_spec.hpp"

namespace ukes {

namespace {

// Where the parser is: one frame per open container.
struct Frame {
  bool array = false;
  long long index = 0;  // arrays: the element being parsed
  std::string key;      // objects: the member being parsed
  std::set<std::string> keys;
};

std::string path_of(const std::vector<Frame>& frames) {
  std::string p;
  for (const Frame& f : frames) {
    if (f.array) {
      p += '[';
      p += std::to_string(f.index);
      p += ']';
    } else {
      if (!p.empty()) p += '.';
      p += f.key;
    }
  }
  return p;
}

}  // namespace

nlohmann::json parse_spec_text(const std::string& text) {
  using json = nlohmann::json;
  // nlohmann's lexer takes a NUL byte for the end of the input and would ignore the rest.
  if (const auto nul = text.find('\0'); nul != std::string::npos)
    throw SpecError("spec", "invalid JSON: a NUL byte at offset " + std::to_string(nul));
  std::vector<Frame> frames;
  std::string duplicate;  // path of the first duplicated key
  const auto element_done = [&] {
    if (!frames.empty() && frames.back().array) ++frames.back().index;
  };
  json::parser_callback_t cb = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        frames.push_back(Frame{});
        break;
      case json::parse_event_t::array_start:
        frames.push_back(Frame{true, 0, {}, {}});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!frames.empty()) frames.pop_back();
        element_done();
        break;
      case json::parse_event_t::key:
        if (!frames.empty()) {
          Frame& f = frames.back();
          f.key = parsed.get<std::string>();
          if (!f.keys.insert(f.key).second && duplicate.empty()) duplicate = path_of(frames);
        }
        break;
      case json::parse_event_t::value:
        element_done();
        break;
    }
    return true;
  };
  json j;
  try {
    j = json::parse(text, cb);
  } catch (const json::exception& e) {
    std::string msg = e.what();
    const auto close = msg.find("] ");
    if (msg.rfind("[json.exception", 0) == 0 && close != std::string::npos)
      msg = msg.substr(close + 2);
    // A number out of double's range (1e999) is a bad value of the field being parsed; syntax
    // errors are the document's.
    const std::string at = path_of(frames);
    const bool value_error = dynamic_cast<const json::out_of_range*>(&e) != nullptr;
    throw SpecError(value_error && !at.empty() ? at : "spec", "invalid JSON: " + msg);
  }
  if (!duplicate.empty()) throw SpecError(duplicate, "duplicate key");
  return j;
}

}  // namespace ukes
