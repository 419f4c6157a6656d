// ASCII whitespace as fastText splits words on it, without std::isspace's C-locale lookup.
#pragma once

namespace sift {

inline bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace sift
