// Word tokenizer for fastText-style and sequence models: whitespace splitting,
// optional punctuation splitting and case folding, with no per-token allocation in
// steady state. The Unicode rules (character classes, case folding, NFKC) are those of
// datasets/unicode.h, on utf8proc; ASCII text tokenizes exactly as it always has.
#pragma once

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace sift {

struct WordTokenizerOptions {
  // Full Unicode case folding ("ȘTIRI" -> "știri", "Straße" -> "strasse", "ΟΔΟΣ" ->
  // "οδοσ"); ASCII capitals to lower case.
  bool lowercase = true;
  bool split_punctuation = true;
  // Punctuation separates words and is dropped (wins over split_punctuation). Symbols
  // (emoji, ©) still become tokens of their own.
  bool drop_punctuation = false;
  // NFKC-normalise each text before splitting ("ﬁ" -> "fi", full-width "ＡＢＣ" -> "ABC").
  bool nfkc = false;
  // Tokens (after case folding) that are dropped; matched in the case the text ends in.
  std::vector<std::string> stopwords;
};

class WordTokenizer {
 public:
  explicit WordTokenizer(WordTokenizerOptions options = {});

  // Splits UTF-8 text on whitespace (ASCII whitespace and every Unicode space separator,
  // Zs Zl Zp, and U+0085). With split_punctuation every punctuation character (ASCII
  // punctuation; Unicode P*, Sm, Sc, Sk) and every symbol (So: emoji, ©) is a token of
  // its own ("don't!" -> "don", "'", "t", "!"; "“hi”" -> "“", "hi", "”"), with the
  // combining marks, ZERO WIDTH JOINER sequences and skin-tone modifiers that follow it;
  // other characters, and bytes that are not valid UTF-8, are word characters.
  // drop_punctuation makes punctuation a separator; stop words are left out.
  // Replaces the contents of out; the strings already in out are reused so that a
  // loop over many lines allocates nothing once warmed up (NFKC allocates per non-ASCII
  // line).
  void tokenize(std::string_view text, std::vector<std::string>& out) const;

  const WordTokenizerOptions& options() const { return options_; }

 private:
  bool is_stopword(const std::string& token) const {
    return !stopwords_.empty() && stopwords_.count(token) != 0;
  }
  void split(std::string_view text, std::vector<std::string>& out) const;

  WordTokenizerOptions options_;
  std::unordered_set<std::string> stopwords_;
};

}  // namespace sift
