// What a run folder holds besides its weights, read without LibTorch: the resolved config,
// the labels, the vocabulary and how text is encoded. load_run (model_bundle.h) and
// `sift predict`'s torch-free fastText path (fasttext_predictor.h) both read it here.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "datasets/labels.h"
#include "datasets/sentencepiece.h"
#include "datasets/text_encoder.h"
#include "datasets/vocab.h"

namespace sift {

struct RunText {
  SiftConfig config;  // config.yaml with `overrides` applied
  LabelSet labels;
  std::shared_ptr<const Vocab> vocab;
  std::shared_ptr<const SentencePieceModel> pieces;     // tokenizer.type sentencepiece only
  std::shared_ptr<const WordPieceTokenizer> wordpiece;  // tokenizer.type wordpiece only
  TextEncoderOptions encoder;
};

// The model registry's input kind of a model type (ModelSpec::input).
using InputKindOf = std::function<InputKind(const std::string& model_type)>;

// config.yaml, labels.txt, vocab.txt, the run's own stop words and tokenizer.model;
// sift::Error naming the folder or file when one is missing or empty.
RunText load_run_text(const std::string& run_dir, const std::vector<std::string>& overrides,
                      const InputKindOf& input_kind);

}  // namespace sift
