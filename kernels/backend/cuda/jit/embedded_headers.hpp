// The kernels/ headers device code includes, as text in the module (generated at build time by
// scripts/embed_headers.cmake): what NVRTC compiles a run-time kernel against.
#pragma once

namespace ukes::jit {

struct EmbeddedHeader {
  const char* name;  // as device code includes it: "kernels/core/hd.hpp"
  const char* text;
};

extern const EmbeddedHeader kEmbeddedHeaders[];
extern const int kEmbeddedHeaderCount;

}  // namespace ukes::jit
