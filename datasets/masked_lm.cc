#include "datasets/masked_lm.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "core/splitmix.h"

namespace sift {
namespace {

bool bracketed(const std::string& piece, char open, char close) {
  return piece.size() > 2 && piece.front() == open && piece.back() == close;
}

bool is_special(const MaskingVocab& vocab, int64_t id) {
  return id < 0 || id >= vocab.size() || vocab.special[static_cast<size_t>(id)];
}

// A random token that is not special (the id itself when 64 draws found none).
int64_t random_token(const MaskingVocab& vocab, int64_t id, uint64_t& state) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    const auto drawn =
        static_cast<int64_t>(splitmix64(state) % static_cast<uint64_t>(vocab.size()));
    if (!is_special(vocab, drawn)) return drawn;
  }
  return id;
}

// Whether flat position p of `ids` starts a unit of choice: any token, or under whole-word
// masking a token that does not continue the word before it. The word before may end the row
// above: packing cuts words between rows, masking does not cut them.
bool starts_unit(const MaskingVocab& vocab, const std::vector<int64_t>& ids, int64_t p,
                 bool whole_word) {
  if (!whole_word || p == 0) return true;
  const int64_t id = ids[static_cast<size_t>(p)];
  return !vocab.continuation[static_cast<size_t>(id)] ||
         is_special(vocab, ids[static_cast<size_t>(p - 1)]);
}

// Chooses position p: [MASK], a random token or the token itself.
void choose(MaskedSequences& out, int64_t p, const MaskingVocab& vocab,
            const MaskingOptions& options, uint64_t& state) {
  const int64_t id = out.inputs[static_cast<size_t>(p)];
  out.targets[static_cast<size_t>(p)] = id;
  ++out.chosen;
  const double u = splitmix_uniform(state);
  if (u < options.mask_share) {
    out.inputs[static_cast<size_t>(p)] = vocab.mask_id;
  } else if (u < options.mask_share + options.random_share) {
    out.inputs[static_cast<size_t>(p)] = random_token(vocab, id, state);
  }
}

}  // namespace

PackedSequences pack_sequences(const RawBatch& batch, int64_t length) {
  if (length < 1) throw Error(fmt::format("packing needs a length >= 1, not {}", length));
  PackedSequences packed;
  packed.length = length;
  const auto total = static_cast<int64_t>(batch.ids.size());
  const int64_t rows = (total + length - 1) / length;
  packed.ids.assign(static_cast<size_t>(rows * length), 0);
  std::copy(batch.ids.begin(), batch.ids.end(), packed.ids.begin());
  for (int64_t r = 0; r < rows; ++r) packed.lengths.push_back(std::min(length, total - r * length));
  return packed;
}

MaskingVocab masking_vocab(const WordPieceVocab& vocab, const char* key) {
  MaskingVocab m;
  m.mask_id = vocab.id("[MASK]");
  if (m.mask_id < 0) {
    throw Error(
        fmt::format("{}: the WordPiece vocabulary has no [MASK] token, which masked-token "
                    "pretraining needs",
                    key));
  }
  mark_pieces(m, vocab.tokens(), PieceMarking::wordpiece);
  return m;
}

MaskingVocab masking_vocab(const SentencePieceModel& model, const char* key) {
  // TextEncoder's ids: piece p is id p + 1, and id 0 the padding (special).
  std::vector<std::string> pieces = {"<pad>"};
  for (int64_t p = 0; p < model.size(); ++p) pieces.push_back(model.id_to_piece(p));
  MaskingVocab m;
  const int64_t mask = model.piece_to_id(kMaskPiece);
  if (mask == model.unk_id()) {
    throw Error(fmt::format(
        "{}: the SentencePiece model {} has no {} piece, which masked-token pretraining needs "
        "(`sift tokenizer train` with pretrain.files adds it)",
        key, model.path(), kMaskPiece));
  }
  m.mask_id = mask + 1;
  mark_pieces(m, pieces, PieceMarking::sentencepiece);
  return m;
}

void mark_pieces(MaskingVocab& vocab, const std::vector<std::string>& pieces,
                 PieceMarking marking) {
  static const std::string kWordStart = "\xe2\x96\x81";  // U+2581, SentencePiece's word start
  vocab.special.clear();
  vocab.continuation.clear();
  for (const auto& piece : pieces) {
    // SentencePiece's byte pieces (<0x41>) are parts of words, not special.
    const bool special = bracketed(piece, '[', ']') ||
                         (marking == PieceMarking::sentencepiece && bracketed(piece, '<', '>') &&
                          piece.compare(0, 3, "<0x") != 0);
    const bool continues = marking == PieceMarking::wordpiece
                               ? piece.size() > 2 && piece.compare(0, 2, "##") == 0
                               : !special && piece.compare(0, kWordStart.size(), kWordStart) != 0;
    vocab.special.push_back(special);
    vocab.continuation.push_back(continues);
  }
}

MaskedSequences mask_tokens(const PackedSequences& packed, const MaskingVocab& vocab,
                            const MaskingOptions& options, uint64_t seed) {
  MaskedSequences out;
  out.inputs = packed.ids;
  out.targets.assign(packed.ids.size(), -1);
  uint64_t state = mix64(seed);
  int64_t first_candidate = -1;
  bool unit_chosen = false;  // carried from row to row: a word cut by packing is chosen whole
  for (int64_t r = 0; r < packed.rows(); ++r) {
    const int64_t n = packed.lengths[static_cast<size_t>(r)];
    for (int64_t p = r * packed.length; p < r * packed.length + n; ++p) {
      if (is_special(vocab, packed.ids[static_cast<size_t>(p)])) {
        unit_chosen = false;
        continue;
      }
      if (first_candidate < 0) first_candidate = p;
      if (starts_unit(vocab, packed.ids, p, options.whole_word)) {
        unit_chosen = splitmix_uniform(state) < options.rate;
      }
      if (unit_chosen) choose(out, p, vocab, options, state);
    }
  }
  if (out.chosen == 0 && first_candidate >= 0) choose(out, first_candidate, vocab, options, state);
  return out;
}

}  // namespace sift
