// Tang et al. 2019 ("Distilling Task-Specific Knowledge from BERT into Simple Neural
// Networks"), transfer-set augmentation: from a labelled text, an unlabelled one for the
// teacher to score. Each word is replaced by kMaskToken with probability `mask`; then,
// with probability `ngram`, only n consecutive words are kept (n uniform in 1..5, at most
// the text's word count; the start uniform). The paper's third rule (POS-guided word
// replacement) needs a tagger and is left out.
#pragma once

#include <cstdint>
#include <string>

namespace sift {

// What masked words become: a word no vocabulary built from real text holds, so a word
// model reads it as unknown (or as its own hashed n-grams), as the paper's [MASK].
inline constexpr const char* kMaskToken = "<mask>";

struct AugmentOptions {
  double mask = 0.0;   // probability that a word is masked
  double ngram = 0.0;  // probability that only an n-gram of the text is kept
  bool enabled() const { return mask > 0.0 || ngram > 0.0; }
};

// The augmented text: words (split at ASCII whitespace) joined by one space. The same
// text, options and seed give the same result on every platform (SplitMix64, no std::
// distributions).
std::string augment_text(const std::string& text, const AugmentOptions& options, uint64_t seed);

// The seed of one record's augmentation, from the stream's seed, the epoch, the record's
// hash and where it was read (so equal texts at two places differ).
uint64_t augment_seed(uint64_t seed, uint64_t epoch, uint64_t text_hash, uint64_t piece,
                      uint64_t offset);

}  // namespace sift
