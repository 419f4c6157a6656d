#include "datasets/unicode.h"

#include <utf8proc.h>

#include <array>
#include <cstdlib>
#include <optional>
#include <vector>

namespace sift {
namespace {

constexpr std::array<CharClass, 128> make_ascii_classes() {
  std::array<CharClass, 128> classes{};
  for (auto& c : classes) c = CharClass::word;
  for (int c : {' ', '\t', '\n', '\r', '\v', '\f'}) classes[c] = CharClass::space;
  for (int c = 33; c < 127; ++c) {
    bool alnum = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    if (!alnum) classes[c] = CharClass::punct;
  }
  return classes;
}

constexpr std::array<CharClass, 128> kAsciiClass = make_ascii_classes();

}  // namespace

void append_utf8(int32_t cp, std::string& out) {
  uint8_t buf[4];
  const auto n = utf8proc_encode_char(cp, buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

std::string utf8_of(const std::vector<int32_t>& cps) {
  std::string s;
  for (int32_t cp : cps) append_utf8(cp, s);
  return s;
}

std::optional<std::string> utf8proc_normalized(std::string_view text, int options) {
  utf8proc_uint8_t* mapped = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const uint8_t*>(text.data()),
                              static_cast<utf8proc_ssize_t>(text.size()), &mapped,
                              static_cast<utf8proc_option_t>(UTF8PROC_STABLE | options));
  std::optional<std::string> out;
  if (n >= 0 && mapped != nullptr)
    out.emplace(reinterpret_cast<const char*>(mapped), static_cast<size_t>(n));
  std::free(mapped);
  return out;
}

CharClass char_class(int32_t cp) {
  if (cp < 0x80) return cp < 0 ? CharClass::word : kAsciiClass[static_cast<size_t>(cp)];
  if (cp == 0x85) return CharClass::space;
  if (cp == 0x200D || (cp >= 0x1F3FB && cp <= 0x1F3FF)) return CharClass::extend;
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_ZS:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
      return CharClass::space;
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
    case UTF8PROC_CATEGORY_SM:
    case UTF8PROC_CATEGORY_SC:
    case UTF8PROC_CATEGORY_SK:
      return CharClass::punct;
    case UTF8PROC_CATEGORY_SO:
      return CharClass::symbol;
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
      return CharClass::extend;
    default:
      return CharClass::word;
  }
}

Utf8Char decode_utf8(std::string_view text, size_t i) {
  const auto b = static_cast<uint8_t>(text[i]);
  if (b < 0x80) return {b, 1};
  utf8proc_int32_t cp = -1;
  const auto n = utf8proc_iterate(reinterpret_cast<const uint8_t*>(text.data()) + i,
                                  static_cast<utf8proc_ssize_t>(text.size() - i), &cp);
  if (n <= 0 || cp < 0) return {-1, 1};
  return {cp, static_cast<uint32_t>(n)};
}

void append_casefold(int32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
    return;
  }
  if (cp == 0x130) {  // İ: full folding gives "i" + U+0307; plain "i" matches more text
    out.push_back('i');
    return;
  }
  utf8proc_int32_t folded[8];
  int boundclass = 0;
  const auto n = utf8proc_decompose_char(cp, folded, 8, UTF8PROC_CASEFOLD, &boundclass);
  if (n <= 0 || n > 8) {
    append_utf8(cp, out);
    return;
  }
  for (utf8proc_ssize_t k = 0; k < n; ++k) append_utf8(folded[k], out);
}

void casefold_utf8(std::string_view text, std::string& out) {
  out.clear();
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const auto b = static_cast<uint8_t>(text[i]);
    if (b < 0x80) {
      out.push_back(static_cast<char>(b >= 'A' && b <= 'Z' ? b + 32 : b));
      ++i;
      continue;
    }
    const Utf8Char c = decode_utf8(text, i);
    if (c.cp < 0) {
      out.push_back(text[i]);
    } else {
      append_casefold(c.cp, out);
    }
    i += c.length;
  }
}

bool nfkc_utf8(std::string_view text, std::string& out) {
  bool ascii = true;
  for (char ch : text) ascii = ascii && static_cast<uint8_t>(ch) < 0x80;
  if (!ascii) {
    const auto normal = utf8proc_normalized(text, UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
    const bool changed = normal && *normal != text;
    if (changed) out = *normal;
    return changed;
  }
  return false;
}

const char* unicode_version() { return utf8proc_unicode_version(); }

namespace {

constexpr int32_t kMaxCodePoint = 0x10FFFF;
constexpr int32_t kHangulFirst = 0xAC00, kHangulLast = 0xD7A3;

std::vector<int32_t> decompose(int32_t cp, utf8proc_option_t options) {
  utf8proc_int32_t buf[32];
  int boundclass = 0;
  const auto n = utf8proc_decompose_char(cp, buf, 32, options, &boundclass);
  if (n <= 0 || n > 32) return {cp};
  return std::vector<int32_t>(buf, buf + n);
}

// NFC of a short sequence, as code points.
std::vector<int32_t> nfc(const std::vector<int32_t>& cps) {
  const std::string s = utf8_of(cps);
  utf8proc_uint8_t* mapped = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const uint8_t*>(s.data()),
                              static_cast<utf8proc_ssize_t>(s.size()), &mapped,
                              static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  std::vector<int32_t> out;
  if (n >= 0 && mapped != nullptr) {
    const std::string_view text(reinterpret_cast<const char*>(mapped), static_cast<size_t>(n));
    for (size_t i = 0; i < text.size();) {
      const Utf8Char c = decode_utf8(text, i);
      out.push_back(c.cp);
      i += c.length;
    }
  }
  std::free(mapped);
  return out;
}

}  // namespace

nlohmann::json unicode_tables_json(bool nfkc) {
  static const char kLetters[] = {'w', 's', 'p', 'y', 'e'};
  nlohmann::json classes = nlohmann::json::array();
  nlohmann::json casefold = nlohmann::json::object();
  char previous = 0;
  std::string folded;
  for (int32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
    const char letter = kLetters[static_cast<size_t>(char_class(cp))];
    if (letter != previous) classes.push_back({cp, std::string(1, letter)});
    previous = letter;
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;  // surrogates: never decoded
    folded.clear();
    append_casefold(cp, folded);
    std::string self;
    append_utf8(cp, self);
    if (folded != self) casefold[std::to_string(cp)] = folded;
  }
  nlohmann::json j = {{"version", unicode_version()}, {"classes", classes}, {"casefold", casefold}};
  if (!nfkc) return j;
  nlohmann::json decomposition = nlohmann::json::object();
  nlohmann::json ccc = nlohmann::json::object();
  nlohmann::json compose = nlohmann::json::array();
  const auto compat = static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
  for (int32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
    if ((cp >= 0xD800 && cp <= 0xDFFF) || (cp >= kHangulFirst && cp <= kHangulLast)) continue;
    const utf8proc_property_t* p = utf8proc_get_property(cp);
    if (p->combining_class != 0) ccc[std::to_string(cp)] = p->combining_class;
    if (p->decomp_seqindex == UINT16_MAX) continue;  // no decomposition of any kind
    const std::vector<int32_t> full = decompose(cp, compat);
    if (full.size() != 1 || full[0] != cp) decomposition[std::to_string(cp)] = full;
    // A primary composite: its canonical decomposition composes back to it.
    const std::vector<int32_t> canonical = decompose(cp, UTF8PROC_DECOMPOSE);
    if (canonical.size() < 2 || nfc(canonical) != std::vector<int32_t>{cp}) continue;
    const std::vector<int32_t> head =
        nfc(std::vector<int32_t>(canonical.begin(), canonical.end() - 1));
    if (head.size() == 1 && nfc({head[0], canonical.back()}) == std::vector<int32_t>{cp}) {
      compose.push_back({head[0], canonical.back(), cp});
    }
  }
  j["decompose"] = decomposition;
  j["ccc"] = ccc;
  j["compose"] = compose;
  return j;
}

}  // namespace sift
