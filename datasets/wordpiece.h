// BERT's tokenizer, torch-free: the basic tokenizer (clean, split CJK ideographs, NFC,
// split on whitespace, lower-case and strip accents for uncased models, split on
// punctuation), then WordPiece's greedy longest-match-first over a vocab.txt with "##"
// continuations. It follows the published algorithm of BERT's tokenization.py as Hugging
// Face's BertTokenizer runs it; the Unicode properties come from utf8proc (Python's from
// unicodedata; both tables are tested against each other in tests/datasets).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sift {

struct WordPieceOptions {
  // Uncased models: lower-case (Python's str.lower(), with its final-sigma rule).
  bool lowercase = true;
  // Strip accents (NFD, then drop the Mn marks); unset: as `lowercase` (BERT's default).
  std::optional<bool> strip_accents;
  bool split_cjk = true;  // each CJK ideograph a word of its own
  // Words of more code points than this become [UNK] whole.
  size_t max_chars_per_word = 100;
  std::string unk = "[UNK]";
  std::string cls = "[CLS]";
  std::string sep = "[SEP]";
  std::string continuation = "##";
};

// vocab.txt: one token a line, its id the line's index (from 0).
class WordPieceVocab {
 public:
  static WordPieceVocab load(const std::string& path);  // throws sift::Error naming path:line
  explicit WordPieceVocab(std::vector<std::string> tokens, const std::string& where = "vocab");

  int32_t id(std::string_view token) const;  // -1 when absent
  const std::string& token(int32_t id) const { return tokens_.at(static_cast<size_t>(id)); }
  size_t size() const { return tokens_.size(); }
  const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> ids_;
};

class WordPieceTokenizer {
 public:
  // Refuses, naming the token, a vocabulary without the unk, cls or sep token.
  WordPieceTokenizer(WordPieceVocab vocab, WordPieceOptions options = {});

  // The basic tokenizer's words for UTF-8 text (invalid bytes are dropped, as U+FFFD is).
  std::vector<std::string> basic_tokens(std::string_view text) const;
  // The WordPiece ids of one basic token, appended to ids.
  void append_wordpieces(const std::string& word, std::vector<int32_t>& ids) const;
  // The pieces of text as strings, without [CLS]/[SEP].
  std::vector<std::string> tokenize(std::string_view text) const;
  // [CLS] pieces [SEP], the pieces cut so that at most max_tokens ids come out
  // (max_tokens >= 2; 0 means no limit).
  std::vector<int32_t> encode(std::string_view text, size_t max_tokens) const;

  const WordPieceVocab& vocab() const { return vocab_; }
  const WordPieceOptions& options() const { return options_; }

 private:
  WordPieceVocab vocab_;
  WordPieceOptions options_;
  int32_t unk_ = 0, cls_ = 0, sep_ = 0;
};

// The tokenizer of a vocab.txt with BERT's defaults and `lowercase` (uncased models); [PAD]
// must be id 0, the padding id of every batch.
std::shared_ptr<const WordPieceTokenizer> open_wordpiece(const std::string& vocab_path,
                                                         bool lowercase);

}  // namespace sift
