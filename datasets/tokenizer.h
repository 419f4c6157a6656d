// Word tokenizer for fastText-style and sequence models: whitespace splitting,
// optional punctuation splitting and lowercasing, with no per-token allocation in
// steady state.
#pragma once

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace sift {

struct WordTokenizerOptions {
  bool lowercase = true;
  bool split_punctuation = true;
  // ASCII punctuation separates words and is dropped (wins over split_punctuation).
  bool drop_punctuation = false;
  // Tokens (after lowercasing) that are dropped; matched in the case the text ends in.
  std::vector<std::string> stopwords;
};

class WordTokenizer {
 public:
  explicit WordTokenizer(WordTokenizerOptions options = {});

  // Splits UTF-8 text on whitespace (ASCII whitespace and U+00A0 NO-BREAK SPACE).
  // With split_punctuation every ASCII punctuation character is a token of its own
  // ("don't!" -> "don", "'", "t", "!"); multi-byte UTF-8 characters are word
  // characters. lowercase maps ASCII capitals and the 2-byte capitals of Latin-1
  // Supplement, Latin Extended-A, Greek and Cyrillic to their lowercase forms.
  // drop_punctuation makes ASCII punctuation a separator; stop words are left out.
  // Replaces the contents of out; the strings already in out are reused so that a
  // loop over many lines allocates nothing once warmed up.
  void tokenize(std::string_view text, std::vector<std::string>& out) const;

  const WordTokenizerOptions& options() const { return options_; }

 private:
  bool is_stopword(const std::string& token) const {
    return !stopwords_.empty() && stopwords_.count(token) != 0;
  }

  WordTokenizerOptions options_;
  std::unordered_set<std::string> stopwords_;
};

// Lowercases UTF-8 text in place with the mapping WordTokenizer uses. Bytes that are
// not valid 2-byte sequences are kept as they are. The result is never longer.
void lowercase_utf8(std::string& text);

}  // namespace sift
