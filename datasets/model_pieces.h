// A pretrained model's input ids from its own SentencePiece model (tokenizer.piece_ids
// albert or fairseq: runs made by `sift import hf`), as its Hugging Face tokenizer makes
// them. Torch-free; the pieces come through the plug-in (datasets/sentencepiece.h).
//   albert (AlbertTokenizer): the text's whitespace runs collapsed to one space and its
//     ends trimmed, `` and '' made ", NFKD with the combining marks dropped (keep_accents
//     false), lower-cased when `lowercase` (do_lower_case), then the pieces, a piece of a
//     digit and a comma ("▁1999,") cut before the comma; [CLS] pieces [SEP] in the
//     model's own ids (its [CLS] and [SEP] pieces).
//   fairseq (XLMRobertaTokenizer): <s> pieces </s>, piece p is id p + 1 and the unknown
//     piece id 3 (fairseq's <s> 0, <pad> 1, </s> 2, <unk> 3 come first).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/enums.h"
#include "datasets/sentencepiece.h"

namespace sift {

class ModelPieces {
 public:
  // sift::Error naming the model file when an albert model has no [CLS] or [SEP] piece.
  ModelPieces(std::shared_ptr<const SentencePieceModel> pieces, PieceIds scheme, bool lowercase);

  // The ids of `text`, at most max_length with the two around it (0: no limit).
  void encode(std::string_view text, size_t max_length, std::vector<int64_t>& ids) const;
  // Ids the model reads: its embedding table's rows (fairseq: the pieces, the four
  // fairseq ids before them and <mask> after).
  int64_t num_ids() const;

 private:
  void albert_pieces(std::string_view text, std::vector<int64_t>& ids) const;

  std::shared_ptr<const SentencePieceModel> pieces_;
  PieceIds scheme_;
  bool lowercase_;
  int64_t first_ = 0;  // [CLS] or <s>
  int64_t last_ = 0;   // [SEP] or </s>
};

// ALBERT's text normalisation before its pieces (preprocess_text): the text as above,
// up to the pieces.
std::string albert_normalized(std::string_view text, bool lowercase);

}  // namespace sift
