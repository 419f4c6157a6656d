// User data (labels, keys, values, paths) shown inside an error message: control bytes
// escaped and long values cut, so that one error stays one readable terminal line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sift {

// `text` with bytes below 0x20 and 0x7f written as \n, \t, \r or \xNN (a backslash as
// \\), cut after `max_bytes` input bytes with "... (N bytes)" appended. Bytes >= 0x80
// pass through (UTF-8 text stays readable).
std::string printable(std::string_view text, std::size_t max_bytes = 200);

// Whether `text` holds a control byte (below 0x20, or 0x7f).
bool has_control_byte(std::string_view text);

}  // namespace sift
