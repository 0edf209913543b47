// Trailing-metadata keys of ukes.v1 replies, shared by the server and its clients.
#pragma once

namespace ukes {

// The JSON path of the field an INVALID_ARGUMENT or RESOURCE_EXHAUSTED reply is about (printable
// ASCII, bounded: service/runspec/printable_text.hpp).
inline constexpr const char* kFieldMetadataKey = "ukes-field";
// On RESOURCE_EXHAUSTED for a full queue: seconds after which the client may submit again. Its
// absence means the refusal is final (a limit, or a server shutting down).
inline constexpr const char* kRetryAfterMetadataKey = "ukes-retry-after-s";

}  // namespace ukes
