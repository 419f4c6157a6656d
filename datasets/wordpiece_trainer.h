// A WordPiece vocabulary (vocab.txt) made from sample texts, torch-free: BERT's special
// tokens, every character the basic tokenizer's words hold (alone, and as a "##"
// continuation, so that no word of the sample becomes [UNK]), then the most frequent whole
// words, up to the size asked. Greedy longest-match-first then reads a frequent word as one
// id and a rare one as characters. It is not Google's WordPiece training (which also adds
// frequent word pieces): a simple, deterministic vocabulary for an encoder pretrained from
// scratch (`sift tokenizer train` with tokenizer.type wordpiece).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "datasets/wordpiece.h"

namespace sift {

// The tokens in id order: [PAD] [UNK] [CLS] [SEP] [MASK], characters by frequency, their
// "##" forms, then words seen at least twice by frequency (ties by spelling), at most `size`
// tokens in all (characters first: a vocabulary smaller than the alphabet is refused by
// sift::Error naming tokenizer.vocab_size).
std::vector<std::string> train_wordpiece_vocab(const std::vector<std::string>& texts, size_t size,
                                               const WordPieceOptions& options);

}  // namespace sift
