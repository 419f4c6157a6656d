#include "datasets/tokenizer.h"

#include <array>
#include <cstdint>
#include <utility>

#include "datasets/unicode.h"

namespace sift {
namespace {

constexpr std::array<uint8_t, 256> make_byte_classes() {
  std::array<uint8_t, 256> classes{};
  for (int c = 0; c < 128; ++c) classes[c] = static_cast<uint8_t>(CharClass::word);
  for (int c : {' ', '\t', '\n', '\r', '\v', '\f'}) {
    classes[c] = static_cast<uint8_t>(CharClass::space);
  }
  for (int c = 33; c < 127; ++c) {
    bool alnum = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    if (!alnum) classes[c] = static_cast<uint8_t>(CharClass::punct);
  }
  for (int c = 128; c < 256; ++c) classes[c] = 0xFF;  // look the character up
  return classes;
}

// ASCII fast path: one table look-up a byte; 0xFF for bytes that start or continue a
// multi-byte character.
constexpr std::array<uint8_t, 256> kByteClass = make_byte_classes();
constexpr auto kWord = static_cast<uint8_t>(CharClass::word);
constexpr auto kSpace = static_cast<uint8_t>(CharClass::space);
constexpr auto kPunct = static_cast<uint8_t>(CharClass::punct);

struct Char {
  CharClass cls;
  uint32_t length;
  int32_t cp;
};

inline Char char_at(std::string_view text, size_t i) {
  const auto b = static_cast<uint8_t>(text[i]);
  if (kByteClass[b] != 0xFF) return {static_cast<CharClass>(kByteClass[b]), 1, b};
  const Utf8Char c = decode_utf8(text, i);
  return {c.cp < 0 ? CharClass::word : char_class(c.cp), c.length, c.cp};
}

// Past the combining marks, ZERO WIDTH JOINER sequences and modifiers after text[i - 1].
size_t skip_extenders(std::string_view text, size_t i) {
  const size_t n = text.size();
  while (i < n && static_cast<uint8_t>(text[i]) >= 0x80) {
    const Char c = char_at(text, i);
    if (c.cls != CharClass::extend) break;
    i += c.length;
    if (c.cp == 0x200D && i < n) {  // a joiner takes the next character along
      const Char next = char_at(text, i);
      if (next.cls == CharClass::space) break;
      i += next.length;
    }
  }
  return i;
}

}  // namespace

WordTokenizer::WordTokenizer(WordTokenizerOptions options) : options_(std::move(options)) {
  for (std::string word : options_.stopwords) {
    if (options_.nfkc) {
      std::string normal;
      if (nfkc_utf8(word, normal)) word.swap(normal);
    }
    if (options_.lowercase) {
      std::string folded;
      casefold_utf8(word, folded);
      word.swap(folded);
    }
    stopwords_.insert(std::move(word));
  }
}

void WordTokenizer::tokenize(std::string_view text, std::vector<std::string>& out) const {
  if (options_.nfkc) {
    std::string normal;
    if (nfkc_utf8(text, normal)) {
      split(normal, out);
      return;
    }
  }
  split(text, out);
}

void WordTokenizer::split(std::string_view text, std::vector<std::string>& out) const {
  size_t count = 0;
  // Assigning into the strings already there keeps their buffers: no allocation in
  // steady state.
  auto emit = [&](size_t begin, size_t end) {
    std::string_view token = text.substr(begin, end - begin);
    if (count == out.size()) out.emplace_back();
    std::string& s = out[count];
    if (!options_.lowercase) {
      s.assign(token.data(), token.size());
    } else {
      s.resize(token.size());
      size_t k = 0;
      for (; k < token.size(); ++k) {
        const auto c = static_cast<uint8_t>(token[k]);
        if (c >= 0x80) break;
        s[k] = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
      }
      if (k < token.size()) {  // not ASCII: fold the rest character by character
        s.resize(k);
        while (k < token.size()) {
          const Utf8Char c = decode_utf8(token, k);
          if (c.cp < 0) {
            s.push_back(token[k]);
          } else {
            append_casefold(c.cp, s);
          }
          k += c.length;
        }
      }
    }
    if (!is_stopword(s)) ++count;
  };
  const bool drop_punct = options_.drop_punctuation;
  const bool split_punct = options_.split_punctuation || drop_punct;
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const Char c = char_at(text, i);
    if (c.cls == CharClass::space) {
      i += c.length;
      continue;
    }
    const size_t begin = i;
    i += c.length;
    if (split_punct && (c.cls == CharClass::punct || c.cls == CharClass::symbol)) {
      i = skip_extenders(text, i);
      if (!(drop_punct && c.cls == CharClass::punct)) emit(begin, i);
      continue;
    }
    while (i < n) {
      const uint8_t b = kByteClass[static_cast<uint8_t>(text[i])];
      if (b == kWord) {  // the common case first
        ++i;
        continue;
      }
      if (b != 0xFF) {  // other ASCII
        if (b == kSpace || (b == kPunct && split_punct)) break;
        ++i;
        continue;
      }
      const Char d = char_at(text, i);
      if (d.cls == CharClass::space) break;
      if (split_punct && (d.cls == CharClass::punct || d.cls == CharClass::symbol)) break;
      i += d.length;
      // A joiner inside a word takes the next character along, as after a symbol.
      if (d.cp == 0x200D && i < n) {
        const Char next = char_at(text, i);
        if (next.cls != CharClass::space) i += next.length;
      }
    }
    emit(begin, i);
  }
  out.resize(count);
}

}  // namespace sift
