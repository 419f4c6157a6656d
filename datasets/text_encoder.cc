#include "datasets/text_encoder.h"

namespace sift {

TextEncoder::TextEncoder(std::shared_ptr<const Vocab> vocab, TextEncoderOptions options)
    : vocab_(std::move(vocab)),
      options_(options),
      tokenizer_(options.tokenizer),
      bag_(*vocab_, options.ngrams, options.buckets),
      sequence_(*vocab_, options.max_length) {}

void TextEncoder::encode(std::string_view text, std::vector<int64_t>& ids) {
  tokenizer_.tokenize(text, tokens_);
  if (options_.kind == InputKind::bag) {
    if (options_.max_length > 0 && static_cast<int64_t>(tokens_.size()) > options_.max_length) {
      tokens_.resize(options_.max_length);
    }
    bag_.encode(tokens_, ids);
  } else {
    sequence_.encode(tokens_, ids);
  }
}

int64_t TextEncoder::num_ids() const {
  return options_.kind == InputKind::bag ? bag_.num_ids() : vocab_->size();
}

}  // namespace sift
