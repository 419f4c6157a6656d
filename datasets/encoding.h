// Conversion of a data file's raw bytes to valid UTF-8.
#pragma once

#include <string>
#include <string_view>

#include "datasets/text_format.h"

namespace sift {

// Converts raw bytes to valid UTF-8 into out (cleared first): latin1 maps each byte to
// its code point; utf8 replaces each invalid byte sequence (maximal subpart, as the
// Unicode standard recommends) by U+FFFD. Pure-ASCII input is copied straight.
void to_utf8(std::string_view in, TextEncoding encoding, std::string& out);

// True when the bytes are valid UTF-8.
bool is_valid_utf8(std::string_view in);
// The byte offset of the first byte that does not start a valid UTF-8 sequence, or npos.
size_t invalid_utf8_at(std::string_view in);

}  // namespace sift
