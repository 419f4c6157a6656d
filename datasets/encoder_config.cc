#include "datasets/encoder_config.h"

#include "datasets/stopwords.h"

namespace sift {

TextEncoderOptions encoder_options(const SiftConfig& config, InputKind kind) {
  TextEncoderOptions e;
  e.tokenizer.lowercase = config.tokenizer.lowercase;
  e.tokenizer.split_punctuation = config.tokenizer.split_punctuation;
  e.tokenizer.drop_punctuation = config.tokenizer.drop_punctuation;
  e.tokenizer.nfkc = config.tokenizer.normalize == "nfkc";
  e.tokenizer.stopwords = resolve_stopwords(config.tokenizer.stopwords);
  e.kind = kind;
  e.ngrams = static_cast<int>(config.model.ngrams);
  e.chars = {static_cast<int>(config.model.minn), static_cast<int>(config.model.maxn)};
  e.buckets = config.model.ngrams > 1 || e.chars.maxn > 0 ? config.model.buckets : 0;
  e.max_length = config.data.max_length;
  e.fasttext_compat = config.tokenizer.fasttext_compat;
  e.piece_ids = config.tokenizer.piece_ids;
  return e;
}

}  // namespace sift
