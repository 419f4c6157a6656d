#include "core/printable.h"

#include <fmt/format.h>

namespace sift {

bool has_control_byte(std::string_view text) {
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

std::string printable(std::string_view text, std::size_t max_bytes) {
  std::string out;
  const std::size_t shown = std::min(text.size(), max_bytes);
  out.reserve(shown + 16);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (shown < text.size()) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

}  // namespace sift
