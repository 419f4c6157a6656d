#include "datasets/encoding.h"

#include <cstdint>
#include <cstring>

namespace sift {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";

// Length of the ASCII prefix, eight bytes at a time.
size_t ascii_prefix(std::string_view in) {
  size_t i = 0;
  for (; i + 8 <= in.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, in.data() + i, 8);
    if (word & 0x8080808080808080ULL) break;
  }
  while (i < in.size() && static_cast<unsigned char>(in[i]) < 0x80) ++i;
  return i;
}

// Length of the valid UTF-8 sequence starting at in[i] (a non-ASCII byte), or, when
// it is invalid, minus the length of its maximal valid prefix (at least 1).
int utf8_sequence(std::string_view in, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(in[k]); };
  unsigned char b0 = byte(i);
  int len;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;  // no overlong forms
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return -1;
  }
  for (int k = 1; k < len; ++k) {
    if (i + k >= in.size()) return -k;
    unsigned char b = byte(i + k);
    bool ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    if (!ok) return -k;
  }
  return len;
}

void utf8_to_utf8(std::string_view in, size_t start, std::string& out) {
  size_t i = start;
  while (i < in.size()) {
    size_t ascii = ascii_prefix(in.substr(i));
    out.append(in.data() + i, ascii);
    i += ascii;
    if (i == in.size()) break;
    int n = utf8_sequence(in, i);
    if (n > 0) {
      out.append(in.data() + i, static_cast<size_t>(n));
      i += static_cast<size_t>(n);
    } else {
      out.append(kReplacement, 3);
      i += static_cast<size_t>(-n);
    }
  }
}

void latin1_to_utf8(std::string_view in, size_t start, std::string& out) {
  for (size_t i = start; i < in.size(); ++i) {
    auto b = static_cast<unsigned char>(in[i]);
    if (b < 0x80) {
      out.push_back(static_cast<char>(b));
    } else {
      out.push_back(static_cast<char>(0xC0 | (b >> 6)));
      out.push_back(static_cast<char>(0x80 | (b & 0x3F)));
    }
  }
}

}  // namespace

void to_utf8(std::string_view in, TextEncoding encoding, std::string& out) {
  size_t ascii = ascii_prefix(in);
  out.assign(in.data(), ascii);
  if (ascii == in.size()) return;
  if (encoding == TextEncoding::latin1) {
    out.reserve(in.size() + (in.size() - ascii));
    latin1_to_utf8(in, ascii, out);
  } else {
    out.reserve(in.size() + 8);
    utf8_to_utf8(in, ascii, out);
  }
}

size_t invalid_utf8_at(std::string_view in) {
  size_t i = 0;
  while (i < in.size()) {
    i += ascii_prefix(in.substr(i));
    if (i == in.size()) break;
    int n = utf8_sequence(in, i);
    if (n < 0) return i;
    i += static_cast<size_t>(n);
  }
  return std::string_view::npos;
}

bool is_valid_utf8(std::string_view in) { return invalid_utf8_at(in) == std::string_view::npos; }

}  // namespace sift
