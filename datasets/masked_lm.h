// Masked-language-model batches (Devlin et al. 2019), torch-free: the texts of a batch
// laid end to end and cut into sequences of a fixed length (packing: no padding but in a
// batch's last, shorter sequence), and BERT's masking of those sequences: each token that
// is not special is chosen with probability `rate` (whole-word masking: each word, its
// continuations with it: WordPiece's "##" pieces, or a SentencePiece piece without the
// U+2581 word start), and a chosen token becomes [MASK] (80%), a random token
// (10%) or stays (10%). Every draw comes from SplitMix64 seeded by the caller, so a batch
// is masked alike on every run and after every resume. Whole-word masking keeps a word
// whole where packing cuts it between two sequences.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/batch.h"
#include "datasets/sentencepiece.h"
#include "datasets/wordpiece.h"

namespace sift {

// Rows of `length` ids, row-major; the last row may be shorter (`lengths`), padded with 0.
struct PackedSequences {
  int64_t length = 0;
  std::vector<int64_t> ids;
  std::vector<int64_t> lengths;
  int64_t rows() const { return static_cast<int64_t>(lengths.size()); }
};

// The batch's texts (each as its encoder framed it: [CLS] pieces [SEP]) one after the
// other, cut every `length` ids (length >= 1). No id is dropped or repeated.
PackedSequences pack_sequences(const RawBatch& batch, int64_t length);

struct MaskingOptions {
  double rate = 0.15;         // share of the non-special tokens (or words) predicted
  double mask_share = 0.8;    // of those: replaced by [MASK]
  double random_share = 0.1;  // of those: replaced by a random non-special token
  bool whole_word = false;    // choose words, a word's continuations with it
};

// What masking needs to know of a vocabulary.
struct MaskingVocab {
  int64_t mask_id = -1;
  std::vector<bool> special;       // by id: never chosen, never drawn as a random token
  std::vector<bool> continuation;  // by id: a piece that continues the word before it
  int64_t size() const { return static_cast<int64_t>(special.size()); }
};

// How a vocabulary's pieces say where words start.
enum class PieceMarking {
  wordpiece,      // "##" marks a continuation; "[...]" tokens are special
  sentencepiece,  // U+2581 marks a word start; "<...>" and "[...]" pieces are special
};

// Sets `vocab`'s special and continuation flags from the pieces, by id (mask_id untouched).
void mark_pieces(MaskingVocab& vocab, const std::vector<std::string>& pieces, PieceMarking marking);

// Of a WordPiece vocabulary: [PAD], [UNK], [CLS], [SEP], [MASK] and every "[...]" token
// are special. Throws sift::Error naming `key` when it has no [MASK] token.
MaskingVocab masking_vocab(const WordPieceVocab& vocab, const char* key);

// The mask piece of a SentencePiece model for pretraining (a control symbol: never produced
// by encoding a text).
inline constexpr const char* kMaskPiece = "[MASK]";

// Of a SentencePiece model, in TextEncoder's ids (piece p is id p + 1; id 0, the padding, is
// special): "<...>" pieces but bytes and "[...]" pieces are special, a piece without the
// U+2581 word start continues the word before it. Throws sift::Error naming `key` when the
// model has no [MASK] piece.
MaskingVocab masking_vocab(const SentencePieceModel& model, const char* key);

// What the model reads and what it predicts: `targets` holds the original id at each
// chosen position and -1 elsewhere (padding included).
struct MaskedSequences {
  std::vector<int64_t> inputs;
  std::vector<int64_t> targets;
  int64_t chosen = 0;  // positions with a target
};

// Masks `packed` with the draws of `seed`. At least one position is chosen when any token
// may be, so that a batch always has a loss.
MaskedSequences mask_tokens(const PackedSequences& packed, const MaskingVocab& vocab,
                            const MaskingOptions& options, uint64_t seed);

}  // namespace sift
