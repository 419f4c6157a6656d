#include "datasets/tokenizer.h"

#include <array>
#include <cstdint>
#include <utility>

namespace sift {
namespace {

enum ByteClass : uint8_t { kWord, kSpace, kPunct, kLeadC2 };

constexpr std::array<uint8_t, 256> make_byte_classes() {
  std::array<uint8_t, 256> classes{};
  for (int c : {' ', '\t', '\n', '\r', '\v', '\f'}) classes[c] = kSpace;
  for (int c = 33; c < 127; ++c) {
    bool alnum = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    if (!alnum) classes[c] = kPunct;
  }
  classes[0xC2] = kLeadC2;  // U+0080..U+00BF, among them U+00A0 NO-BREAK SPACE
  return classes;
}

constexpr std::array<uint8_t, 256> kByteClass = make_byte_classes();

bool is_nbsp_at(std::string_view text, size_t i) {
  return i + 1 < text.size() && static_cast<uint8_t>(text[i + 1]) == 0xA0;
}

// Length in bytes of the whitespace at text[i], or 0 when it is not whitespace.
size_t space_length(std::string_view text, size_t i) {
  uint8_t cls = kByteClass[static_cast<uint8_t>(text[i])];
  if (cls == kSpace) return 1;
  if (cls == kLeadC2 && is_nbsp_at(text, i)) return 2;
  return 0;
}

uint32_t lower_latin_extended_a(uint32_t cp) {
  if (cp == 0x130) return 'i';   // İ: the simple mapping drops the dot
  if (cp == 0x178) return 0xFF;  // Ÿ -> ÿ, which lives in Latin-1
  if (cp == 0x138 || cp == 0x149 || cp == 0x17F) return cp;  // lowercase-only letters
  // Upper/lower pairs: capitals on even code points, except in U+0139..U+0148 and
  // U+0179..U+017E where the pairing shifts by one.
  bool odd_capitals = (cp >= 0x139 && cp <= 0x148) || cp >= 0x179;
  bool is_capital = (cp % 2 == 1) == odd_capitals;
  return is_capital ? cp + 1 : cp;
}

uint32_t lower_greek(uint32_t cp) {
  if (cp >= 0x391 && cp <= 0x3AB && cp != 0x3A2) return cp + 32;
  if (cp >= 0x388 && cp <= 0x38A) return cp + 37;
  if (cp >= 0x3D8 && cp <= 0x3EF) return cp % 2 == 0 ? cp + 1 : cp;
  if (cp >= 0x3FD) return cp - 130;  // Ͻ Ͼ Ͽ -> ͻ ͼ ͽ
  switch (cp) {
    case 0x370: case 0x372: case 0x376: case 0x3F7: case 0x3FA: return cp + 1;
    case 0x37F: return 0x3F3;
    case 0x386: return 0x3AC;
    case 0x38C: return 0x3CC;
    case 0x38E: case 0x38F: return cp + 63;
    case 0x3CF: return 0x3D7;
    case 0x3F4: return 0x3B8;
    case 0x3F9: return 0x3F2;
    default: return cp;
  }
}

uint32_t lower_cyrillic(uint32_t cp) {
  if (cp <= 0x40F) return cp + 80;
  if (cp <= 0x42F) return cp + 32;
  if (cp == 0x4C0) return 0x4CF;
  if (cp >= 0x4C1 && cp <= 0x4CE) return cp % 2 == 1 ? cp + 1 : cp;
  bool paired = (cp >= 0x460 && cp <= 0x481) || cp >= 0x48A;
  return paired && cp % 2 == 0 ? cp + 1 : cp;
}

// Lowercase of a code point in U+0080..U+07FF (the 2-byte UTF-8 range).
uint32_t lower_two_byte(uint32_t cp) {
  if (cp >= 0xC0 && cp <= 0xDE) return cp == 0xD7 ? cp : cp + 32;  // × is no letter
  if (cp >= 0x100 && cp <= 0x17F) return lower_latin_extended_a(cp);
  if (cp >= 0x370 && cp <= 0x3FF) return lower_greek(cp);
  if (cp >= 0x400 && cp <= 0x4FF) return lower_cyrillic(cp);
  return cp;
}

}  // namespace

void lowercase_utf8(std::string& text) {
  size_t w = 0;
  size_t r = 0;
  const size_t n = text.size();
  while (r < n) {
    auto c = static_cast<uint8_t>(text[r]);
    if (c < 0x80) {
      text[w++] = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
      ++r;
      continue;
    }
    auto next = r + 1 < n ? static_cast<uint8_t>(text[r + 1]) : 0;
    if ((c & 0xE0) != 0xC0 || (next & 0xC0) != 0x80) {  // not a 2-byte sequence
      text[w++] = text[r++];
      continue;
    }
    uint32_t lower = lower_two_byte(((c & 0x1Fu) << 6) | (next & 0x3Fu));
    if (lower < 0x80) {
      text[w++] = static_cast<char>(lower);
    } else {
      text[w++] = static_cast<char>(0xC0 | (lower >> 6));
      text[w++] = static_cast<char>(0x80 | (lower & 0x3F));
    }
    r += 2;
  }
  text.resize(w);
}

WordTokenizer::WordTokenizer(WordTokenizerOptions options) : options_(std::move(options)) {
  for (std::string word : options_.stopwords) {
    if (options_.lowercase) lowercase_utf8(word);
    stopwords_.insert(std::move(word));
  }
}

void WordTokenizer::tokenize(std::string_view text, std::vector<std::string>& out) const {
  size_t count = 0;
  // Assigning into the strings already there keeps their buffers: no allocation in
  // steady state.
  auto emit = [&](size_t begin, size_t end) {
    std::string_view token = text.substr(begin, end - begin);
    if (count < out.size()) {
      out[count].assign(token.data(), token.size());
    } else {
      out.emplace_back(token);
    }
    if (options_.lowercase) lowercase_utf8(out[count]);
    if (!is_stopword(out[count])) ++count;
  };
  const bool drop_punct = options_.drop_punctuation;
  const bool split_punct = options_.split_punctuation || drop_punct;
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    if (size_t space = space_length(text, i)) {
      i += space;
      continue;
    }
    size_t begin = i;
    if (split_punct && kByteClass[static_cast<uint8_t>(text[i])] == kPunct) {
      ++i;
      if (!drop_punct) emit(begin, i);
      continue;
    }
    for (++i; i < n; ++i) {
      uint8_t cls = kByteClass[static_cast<uint8_t>(text[i])];
      if (cls == kWord) continue;
      if (cls == kSpace || (cls == kPunct && split_punct)) break;
      if (cls == kLeadC2 && is_nbsp_at(text, i)) break;
    }
    emit(begin, i);
  }
  out.resize(count);
}

}  // namespace sift
