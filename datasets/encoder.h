// Turns tokens into model input ids: a bag of word and hashed word n-gram ids for
// fastText-style models, or one id per token for sequence models.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "datasets/vocab.h"

namespace sift {

// FNV-1a, 32-bit, over the UTF-8 bytes: fastText's Dictionary::hash without its
// signed-char quirk (bytes >= 0x80 hash differently from fastText's).
uint32_t hash_word(std::string_view word);
// fastText's own Dictionary::hash: FNV-1a with each byte taken as a signed char, so
// bytes >= 0x80 are sign-extended to 32 bits before the xor. Equals hash_word on ASCII.
uint32_t fasttext_hash_word(std::string_view word);

// fastText's end-of-line word, appended to every text with fasttext_compat; it has no
// character n-grams.
inline constexpr const char* kFastTextEos = "</s>";

// Character n-grams of each word (fastText's subwords, -minn/-maxn): every run of
// minn..maxn characters of "<word>" (minn 0 counts as 1, as in fastText) (UTF-8 characters, not bytes; a lone "<" or ">" is
// not one), hashed into the same buckets as word n-grams. 0, 0: none.
struct CharNgrams {
  int minn = 0;
  int maxn = 0;
};

// Bag-of-words ids: for each word its id if it is in the vocabulary (unknown words are
// dropped) followed by its character n-grams (unknown words keep theirs: fastText's
// vector for a word it never saw), then for n = 2..ngrams every word n-gram hashed into
// one of `buckets` ids after the vocabulary: vocab.size() + h % buckets, where h combines
// the words' hash_word values as fastText does (h = h * 116049371 + next, on uint64).
// Unknown words still take part in n-grams. fastText's end-of-line word "</s>" has no
// character n-grams. The vocab must outlive the encoder.
class BagEncoder {
 public:
  // ngrams >= 1; buckets > 0 when ngrams > 1 or chars.maxn > 0; minn <= maxn when
  // maxn > 0 (sift::Error otherwise).
  BagEncoder(const Vocab& vocab, int ngrams, int64_t buckets);
  // fasttext_hashing: n-gram buckets exactly as fastText computes them (models imported
  // from a fastText .bin): words and character n-grams hashed with fasttext_hash_word, and
  // each 32-bit word hash sign-extended to 64 bits before it is combined (fastText keeps
  // them as int32_t).
  BagEncoder(const Vocab& vocab, int ngrams, int64_t buckets, bool fasttext_hashing,
             CharNgrams chars = {});

  // Replaces the contents of ids. Allocation-free once ids has grown; thread-safe.
  void encode(const std::vector<std::string>& tokens, std::vector<int64_t>& ids) const;

  // Size of the id space: vocab.size() + buckets when anything is hashed, else vocab.size().
  int64_t num_ids() const;

 private:
  void append_ngrams(size_t num_tokens, std::vector<int64_t>& ids) const;
  void append_char_ngrams(const std::string& word, std::vector<int64_t>& ids) const;

  const Vocab* vocab_;
  int ngrams_;
  int64_t buckets_;
  bool fasttext_hashing_ = false;
  CharNgrams chars_;
};

// Sequence ids: one per token (Vocab::kUnk for unknown words), truncated to
// max_length tokens (0 = no limit). The vocab must outlive the encoder.
class SequenceEncoder {
 public:
  SequenceEncoder(const Vocab& vocab, int64_t max_length);  // max_length >= 0

  // Replaces the contents of ids.
  void encode(const std::vector<std::string>& tokens, std::vector<int64_t>& ids) const;

 private:
  const Vocab* vocab_;
  int64_t max_length_;
};

}  // namespace sift
