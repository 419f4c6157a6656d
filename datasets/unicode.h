// The Unicode rules of the word tokenizer (datasets/tokenizer.h), on utf8proc: character
// classes, case folding and NFKC normalisation. ASCII keeps the tokenizer's historical
// byte table, so ASCII text tokenizes byte for byte as before.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sift {

enum class CharClass : uint8_t {
  word,    // letters, digits and everything not below; also bytes that are not valid UTF-8
  space,   // separates tokens: ASCII " \t\n\r\v\f", Unicode Zs, Zl, Zp and U+0085
  punct,   // ASCII punctuation, Unicode P* (Pc Pd Ps Pe Pi Pf Po), Sm, Sc and Sk
  symbol,  // Unicode So (emoji, ©, °): a token of its own when splitting, never dropped
  extend,  // combining marks (M*), ZERO WIDTH JOINER, emoji skin-tone modifiers:
           // attach to the character before them
};

// Class of a code point (0..0x10FFFF).
CharClass char_class(int32_t cp);

// Decodes the character at text[i] (i < text.size()): its code point, or -1 for a byte
// that does not start a valid UTF-8 sequence (then length 1).
struct Utf8Char {
  int32_t cp;
  uint32_t length;
};
Utf8Char decode_utf8(std::string_view text, size_t i);

// Appends the UTF-8 encoding of code point cp (0..0x10FFFF) to out.
void append_utf8(int32_t cp, std::string& out);
// The UTF-8 text of code points.
std::string utf8_of(const std::vector<int32_t>& cps);
// utf8proc_map of text with UTF8PROC_STABLE and `options` (UTF8PROC_COMPOSE,
// UTF8PROC_DECOMPOSE, UTF8PROC_COMPAT...); nothing when the text is not valid UTF-8.
std::optional<std::string> utf8proc_normalized(std::string_view text, int options);

// Appends the full Unicode case folding of cp to out (CaseFolding.txt, status C + F:
// "ß" -> "ss", final "ς" -> "σ"), except U+0130 İ, which folds to plain "i".
void append_casefold(int32_t cp, std::string& out);

// Case-folds UTF-8 text into out (cleared first): ASCII capitals to lower case, other
// characters by append_casefold; invalid bytes are kept as they are.
void casefold_utf8(std::string_view text, std::string& out);

// NFKC of UTF-8 text into out. Returns false, leaving out as it was, when nothing needs
// normalising: ASCII text, text already in NFKC, and text that is not valid UTF-8 (kept
// as it is).
bool nfkc_utf8(std::string_view text, std::string& out);

// The Unicode version of utf8proc's tables, e.g. "15.0.0".
const char* unicode_version();

// The tables above for a reader in another language (unicode.json of `sift export`,
// read by examples/classify.py), so that it needs no Unicode database of its own:
//   "version": unicode_version();
//   "classes": [[first code point, class letter], ...]: runs covering 0..0x10FFFF, class
//       letters w(ord) s(pace) p(unct) y (symbol) e(xtend);
//   "casefold": {"code point": "folded text"} for every code point that append_casefold
//       changes;
// and with nfkc, what NFKC needs besides Hangul's arithmetic:
//   "decompose": {"code point": [code points]}: full compatibility decomposition (NFKD
//       of the one character) where it differs from the character, Hangul syllables aside;
//   "ccc": {"code point": canonical combining class} where not 0;
//   "compose": [[first, second, composite], ...]: the primary composites (canonical
//       pairs that NFC composes).
nlohmann::json unicode_tables_json(bool nfkc);

}  // namespace sift
