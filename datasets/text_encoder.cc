#include "datasets/text_encoder.h"

#include <algorithm>

namespace sift {

void split_fasttext(std::string_view text, std::vector<std::string>& out) {
  size_t n = 0;
  size_t i = 0;
  const auto space = [](char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' || c == '\0';
  };
  while (i < text.size()) {
    while (i < text.size() && space(text[i])) ++i;
    const size_t start = i;
    while (i < text.size() && !space(text[i])) ++i;
    if (i == start) break;
    if (n < out.size()) {
      out[n].assign(text.data() + start, i - start);
    } else {
      out.emplace_back(text.data() + start, i - start);
    }
    ++n;
  }
  out.resize(n);
}

TextEncoder::TextEncoder(std::shared_ptr<const Vocab> vocab, TextEncoderOptions options,
                         std::shared_ptr<const SentencePieceModel> pieces,
                         std::shared_ptr<const WordPieceTokenizer> wordpiece)
    : vocab_(vocab ? std::move(vocab) : std::make_shared<const Vocab>()),
      pieces_(std::move(pieces)),
      wordpiece_(std::move(wordpiece)),
      model_pieces_(pieces_ && options.piece_ids != PieceIds::sift
                        ? std::make_shared<const ModelPieces>(pieces_, options.piece_ids,
                                                              options.tokenizer.lowercase)
                        : nullptr),
      options_(options),
      tokenizer_(options.tokenizer),
      bag_(*vocab_, options.ngrams, options.buckets, options.fasttext_compat, options.chars),
      sequence_(*vocab_, options.max_length) {}

void TextEncoder::encode_pieces(std::string_view text, std::vector<int64_t>& ids) {
  pieces_->encode(text, ids);
  if (options_.max_length > 0 && static_cast<int64_t>(ids.size()) > options_.max_length) {
    ids.resize(static_cast<size_t>(options_.max_length));
  }
  for (auto& id : ids) ++id;  // 0 is the padding id
  if (options_.kind != InputKind::bag || options_.ngrams < 2) return;
  // Piece n-grams hashed into buckets after the pieces, as BagEncoder does for words.
  const size_t n = ids.size();
  const int64_t first_bucket = pieces_->size() + 1;
  for (size_t i = 0; i < n; ++i) {
    uint64_t h = static_cast<uint64_t>(ids[i]);
    for (size_t j = i + 1; j < n && j < i + static_cast<size_t>(options_.ngrams); ++j) {
      h = h * 116049371ULL + static_cast<uint64_t>(ids[j]);
      ids.push_back(first_bucket +
                    static_cast<int64_t>(h % static_cast<uint64_t>(options_.buckets)));
    }
  }
}

void TextEncoder::encode(std::string_view text, std::vector<int64_t>& ids) {
  if (wordpiece_) {
    const std::vector<int32_t> pieces =
        wordpiece_->encode(text, static_cast<size_t>(std::max<int64_t>(options_.max_length, 0)));
    ids.assign(pieces.begin(), pieces.end());
    return;
  }
  if (model_pieces_) {
    model_pieces_->encode(text, static_cast<size_t>(std::max<int64_t>(options_.max_length, 0)),
                          ids);
    return;
  }
  if (pieces_) {
    encode_pieces(text, ids);
    return;
  }
  if (options_.fasttext_compat) {
    split_fasttext(text, tokens_);
    tokens_.emplace_back(kFastTextEos);
  } else {
    tokenizer_.tokenize(text, tokens_);
  }
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
  if (wordpiece_) return static_cast<int64_t>(wordpiece_->vocab().size());
  if (model_pieces_) return model_pieces_->num_ids();
  if (pieces_) {
    const bool hashed = options_.kind == InputKind::bag && options_.ngrams > 1;
    return pieces_->size() + 1 + (hashed ? options_.buckets : 0);
  }
  return options_.kind == InputKind::bag ? bag_.num_ids() : vocab_->size();
}

}  // namespace sift
