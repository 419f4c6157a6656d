// Text to model input ids: the tokenizer plus the id scheme the model asks for.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/enums.h"
#include "config/model_traits.h"
#include "datasets/encoder.h"
#include "datasets/model_pieces.h"
#include "datasets/sentencepiece.h"
#include "datasets/tokenizer.h"
#include "datasets/vocab.h"
#include "datasets/wordpiece.h"

namespace sift {

struct TextEncoderOptions {
  WordTokenizerOptions tokenizer;
  InputKind kind = InputKind::bag;
  int ngrams = 1;
  int64_t buckets = 0;
  CharNgrams chars;        // character n-grams of each word (bags only)
  int64_t max_length = 0;  // tokens kept per text; 0: all
  // Text to ids exactly as a fastText supervised model reads it (runs made by `sift import
  // fasttext`): split on ASCII whitespace only (' ', \t, \n, \v, \f, \r, \0; nothing is
  // lower-cased or split off), "</s>" appended as the end-of-line word, n-grams hashed as
  // fastText does (BagEncoder's fasttext_hashing). The word tokenizer options are unused.
  bool fasttext_compat = false;
  // With a SentencePiece model: Sift's ids (p + 1) or a pretrained model's own
  // (datasets/model_pieces.h; tokenizer.lowercase is then its do_lower_case).
  PieceIds piece_ids = PieceIds::sift;
};

// Splits text into words as fastText's Dictionary::readWord does (ASCII whitespace and NUL).
void split_fasttext(std::string_view text, std::vector<std::string>& out);

class TextEncoder {
 public:
  // `vocab` is shared so that the encoder can outlive the code that built it. With a
  // SentencePiece model, text is cut into its pieces instead of words, and piece p gets
  // id p + 1 (0 stays the padding id), or with options.piece_ids albert or fairseq the
  // pretrained model's ids (ModelPieces); the vocabulary is then unused.
  // With a WordPiece tokenizer (BERT-family runs: tokenizer.type wordpiece), text becomes
  // [CLS] pieces [SEP] in the vocab.txt's own ids, cut to max_length ids; [PAD] is id 0.
  TextEncoder(std::shared_ptr<const Vocab> vocab, TextEncoderOptions options,
              std::shared_ptr<const SentencePieceModel> pieces = nullptr,
              std::shared_ptr<const WordPieceTokenizer> wordpiece = nullptr);

  // Not thread-safe (reuses a token buffer): give each worker thread its own copy.
  void encode(std::string_view text, std::vector<int64_t>& ids);
  int64_t num_ids() const;
  const Vocab& vocab() const { return *vocab_; }
  const TextEncoderOptions& options() const { return options_; }

 private:
  void encode_pieces(std::string_view text, std::vector<int64_t>& ids);

  std::shared_ptr<const Vocab> vocab_;
  std::shared_ptr<const SentencePieceModel> pieces_;
  std::shared_ptr<const WordPieceTokenizer> wordpiece_;
  std::shared_ptr<const ModelPieces> model_pieces_;  // piece_ids albert or fairseq
  TextEncoderOptions options_;
  WordTokenizer tokenizer_;
  BagEncoder bag_;
  SequenceEncoder sequence_;
  std::vector<std::string> tokens_;
};

}  // namespace sift
