// User text quoted back to the user: in error messages, gRPC metadata and log lines.
//
// gRPC aborts the process when a metadata value holds a byte outside printable ASCII, and a quoted
// field name of megabytes overflows the reply's metadata limit (and the log). So every piece of
// client text that a reply or a log line quotes goes through printable_text first.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ukes {

// Most bytes of a quoted field path and of an error's reason (what SpecError keeps).
inline constexpr std::size_t kMaxQuotedFieldBytes = 256;
inline constexpr std::size_t kMaxQuotedReasonBytes = 1024;

// `text` with every byte outside printable ASCII (0x20-0x7e) and every backslash escaped as
// \xNN (\\ for a backslash), cut to at most `max_bytes` of escaped text plus a marker that says
// how many input bytes were left out. The result is printable ASCII, at most max_bytes + 32 long.
std::string printable_text(std::string_view text, std::size_t max_bytes);

}  // namespace ukes
