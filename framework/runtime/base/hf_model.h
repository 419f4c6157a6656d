// A Hugging Face model folder (config.json, model.safetensors, the tokenizer's files and
// tokenizer_config.json) read as the BERT-family encoder's options and weights, torch-free:
// what `sift import hf` writes a run folder from. Architectures (config.json's
// model_type): bert (BERT and MiniLM-style BERTs), distilbert and electra (discriminators),
// all WordPiece (vocab.txt); albert (factorized embeddings, one layer group applied
// num_hidden_layers times, SentencePiece spiece.model) and xlm-roberta (positions from
// padding_idx + 1, SentencePiece sentencepiece.bpe.model in fairseq's ids), their pieces
// read through the SentencePiece plug-in. Anything else, a missing file or a missing
// tensor is refused with one line naming it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"

namespace sift {

// A tensor under the encoder's own parameter names (models/bert.h), float32, row-major.
struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;
};

struct HfModel {
  std::string model_type;  // config.json's: bert, distilbert, electra, albert, xlm-roberta
  ModelConfig model;       // model.type bert and its sizes
  int64_t vocab_size = 0;
  std::vector<NamedTensor> tensors;  // the encoder's; with a classification head, its too
  std::vector<std::string> labels;   // id2label in id order, when the folder has a head
  bool lowercase = true;             // tokenizer_config.json's do_lower_case
  TokenizerType tokenizer = TokenizerType::wordpiece;
  PieceIds piece_ids = PieceIds::sift;  // SentencePiece models: albert or fairseq
  std::string tokenizer_path;           // the folder's vocab.txt or SentencePiece model
};

// Appends a Linear `name` (.weight [rows, cols], .bias [rows]) in BERT's initialisation,
// N(0, 0.02) weights and zero bias: a part the folder does not hold (pooler, new head).
void add_new_linear(HfModel& model, const std::string& name, int64_t rows, int64_t cols);

// Reads DIR; throws sift::Error naming the file, key or tensor at fault.
HfModel read_hf_model(const std::string& dir);

}  // namespace sift
