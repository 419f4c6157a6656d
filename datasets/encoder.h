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

// Bag-of-words ids: the ids of in-vocabulary words (unknown words dropped), then
// for n = 2..ngrams every word n-gram hashed into one of `buckets` ids after the
// vocabulary: vocab.size() + h % buckets, where h combines the words' hash_word
// values as fastText does (h = h * 116049371 + next, on uint64). Unknown words still
// take part in n-grams. The vocab must outlive the encoder.
class BagEncoder {
 public:
  // ngrams >= 1; buckets > 0 when ngrams > 1 (sift::Error otherwise).
  BagEncoder(const Vocab& vocab, int ngrams, int64_t buckets);
  // fasttext_hashing: n-gram buckets exactly as fastText computes them (models imported
  // from a fastText .bin): words hashed with fasttext_hash_word, and each 32-bit word hash
  // sign-extended to 64 bits before it is combined (fastText keeps them as int32_t).
  BagEncoder(const Vocab& vocab, int ngrams, int64_t buckets, bool fasttext_hashing);

  // Replaces the contents of ids. Allocation-free once ids has grown; thread-safe.
  void encode(const std::vector<std::string>& tokens, std::vector<int64_t>& ids) const;

  // Size of the id space: vocab.size() + (ngrams > 1 ? buckets : 0).
  int64_t num_ids() const;

 private:
  void append_ngrams(size_t num_tokens, std::vector<int64_t>& ids) const;

  const Vocab* vocab_;
  int ngrams_;
  int64_t buckets_;
  bool fasttext_hashing_ = false;
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
