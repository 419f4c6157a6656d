#include "datasets/encoder.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace sift {

uint32_t hash_word(std::string_view word) {
  uint32_t h = 2166136261u;
  for (char c : word) {
    h ^= static_cast<uint8_t>(c);
    h *= 16777619u;
  }
  return h;
}

uint32_t fasttext_hash_word(std::string_view word) {
  uint32_t h = 2166136261u;
  for (char c : word) {
    h ^= static_cast<uint32_t>(static_cast<int8_t>(c));
    h *= 16777619u;
  }
  return h;
}

BagEncoder::BagEncoder(const Vocab& vocab, int ngrams, int64_t buckets)
    : BagEncoder(vocab, ngrams, buckets, false) {}

BagEncoder::BagEncoder(const Vocab& vocab, int ngrams, int64_t buckets, bool fasttext_hashing,
                       CharNgrams chars)
    : vocab_(&vocab),
      ngrams_(ngrams),
      buckets_(buckets),
      fasttext_hashing_(fasttext_hashing),
      chars_(chars) {
  if (ngrams < 1) throw Error(fmt::format("word n-gram length must be >= 1, got {}", ngrams));
  if (buckets < 0 || ((ngrams > 1 || chars.maxn > 0) && buckets == 0)) {
    throw Error(fmt::format("hashed n-grams need buckets > 0, got {}", buckets));
  }
  if (chars.maxn > 0 && (chars.minn < 0 || chars.minn > chars.maxn)) {
    throw Error(fmt::format("character n-grams need 0 <= minn <= maxn, got {} and {}", chars.minn,
                            chars.maxn));
  }
}

int64_t BagEncoder::num_ids() const {
  return vocab_->size() + (ngrams_ > 1 || chars_.maxn > 0 ? buckets_ : 0);
}

// fastText's Dictionary::computeSubwords over "<" + word + ">": from each character start,
// the runs of minn..maxn characters (continuation bytes 10xxxxxx stay with their
// character), leaving out a single character at either end (the bare "<" and ">"). The
// hash runs over the bytes as they are read, so no string is built.
void BagEncoder::append_char_ngrams(const std::string& word, std::vector<int64_t>& ids) const {
  if (word == kFastTextEos) return;
  const size_t size = word.size() + 2;
  const auto byte = [&](size_t k) { return k == 0 ? '<' : k == size - 1 ? '>' : word[k - 1]; };
  const auto continuation = [&](size_t k) { return (byte(k) & 0xC0) == 0x80; };
  const uint64_t buckets = static_cast<uint64_t>(buckets_);
  const int64_t base = vocab_->size();
  for (size_t i = 0; i < size; ++i) {
    if (continuation(i)) continue;
    uint32_t h = 2166136261u;
    size_t j = i;
    for (int n = 1; j < size && n <= chars_.maxn; ++n) {
      do {
        const char c = byte(j++);
        h ^= fasttext_hashing_ ? static_cast<uint32_t>(static_cast<int8_t>(c))
                               : static_cast<uint32_t>(static_cast<uint8_t>(c));
        h *= 16777619u;
      } while (j < size && continuation(j));
      if (n >= chars_.minn && !(n == 1 && (i == 0 || j == size))) {
        ids.push_back(base + static_cast<int64_t>(h % buckets));
      }
    }
  }
}

void BagEncoder::encode(const std::vector<std::string>& tokens, std::vector<int64_t>& ids) const {
  ids.clear();
  // With word n-grams, the word hashes are parked at the front of ids rather than in a
  // scratch member, so encode stays const, thread-safe and allocation-free; they go at the end.
  const size_t n = ngrams_ > 1 ? tokens.size() : 0;
  if (n > 0 && fasttext_hashing_) {
    // Stored sign-extended: as fastText's int32_t hashes once converted to uint64_t.
    for (const std::string& token : tokens) {
      ids.push_back(static_cast<int32_t>(fasttext_hash_word(token)));
    }
  } else if (n > 0) {
    for (const std::string& token : tokens) ids.push_back(hash_word(token));
  }
  for (const std::string& token : tokens) {
    int64_t id = vocab_->id(token);
    if (id != Vocab::kUnk) ids.push_back(id);
    if (chars_.maxn > 0) append_char_ngrams(token, ids);
  }
  if (n == 0) return;
  append_ngrams(n, ids);
  ids.erase(ids.begin(), ids.begin() + static_cast<ptrdiff_t>(n));
}

// Expects the n word hashes in ids[0, n). Order as fastText's addWordNgrams: by
// start position, then by length.
void BagEncoder::append_ngrams(size_t n, std::vector<int64_t>& ids) const {
  const uint64_t buckets = static_cast<uint64_t>(buckets_);
  const int64_t base = vocab_->size();
  for (size_t i = 0; i < n; ++i) {
    uint64_t h = static_cast<uint64_t>(ids[i]);
    size_t end = std::min(n, i + static_cast<size_t>(ngrams_));
    for (size_t j = i + 1; j < end; ++j) {
      h = h * 116049371u + static_cast<uint64_t>(ids[j]);
      ids.push_back(base + static_cast<int64_t>(h % buckets));
    }
  }
}

SequenceEncoder::SequenceEncoder(const Vocab& vocab, int64_t max_length)
    : vocab_(&vocab), max_length_(max_length) {
  if (max_length < 0) throw Error(fmt::format("max_length must be >= 0, got {}", max_length));
}

void SequenceEncoder::encode(const std::vector<std::string>& tokens,
                             std::vector<int64_t>& ids) const {
  size_t n = tokens.size();
  if (max_length_ > 0) n = std::min(n, static_cast<size_t>(max_length_));
  ids.resize(n);
  for (size_t i = 0; i < n; ++i) ids[i] = vocab_->id(tokens[i]);
}

}  // namespace sift
