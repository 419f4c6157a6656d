// How a run reads its data, resolved once from the config (data.*, tokenizer.*, the
// model's input options, run.seed, train.batch_size and train.init_from) by
// resolve_data. Everything that opens a split or builds a vocabulary takes this plan,
// so no reader below looks at those keys again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "datasets/example_stream.h"
#include "datasets/masked_lm.h"
#include "datasets/sharded_stream.h"
#include "datasets/text_encoder.h"
#include "datasets/text_format.h"

namespace sift {

// Where a split's records come from: file patterns (expanded when the split is opened,
// so a missing file is reported by the reader that needs it), how to read them and
// which hashed part of them belongs to the split.
struct SplitSource {
  std::vector<std::string> patterns;
  std::string key;  // the option that named them ("data.train.path")
  TextFormat format;
  HashPart part = HashPart::all;  // all: the split has files of its own
};

// The vocabulary pass's limits (tokenizer.count_limit, min_count, max_size).
struct VocabLimits {
  uint64_t count_limit = 0;
  uint64_t min_count = 1;
  uint64_t max_size = 0;
  // model.pretrained, where its words join the vocabulary after the count (the model's
  // traits: the fastText model's, as -pretrainedVectors); "" otherwise.
  std::string pretrained_words;
  int64_t pretrained_dim = 0;
};

// Distillation's transfer set (train.distill.unlabeled, train.distill.augment): texts
// without labels that only the teacher scores. Each source is read by a stream of its own
// whose batches of stream.batch_size rows are appended to every labelled batch; it runs
// across the labelled epochs (which the labelled data alone defines), starting its own
// epoch again whenever it ends.
struct TransferSource {
  std::string name;  // "unlabeled" or "augment": its data position in last.ckpt is data_<name>
  SplitSource source;
  StreamOptions stream;  // unlabeled, augment, order_salt, batch_size set; rank on opening
};

// Masked-token pretraining (pretrain.*): each batch's texts packed into sequences of
// `sequence_tokens` and masked (datasets/masked_lm.h).
struct MaskedLmPlan {
  MaskingOptions masking;
  int64_t sequence_tokens = 128;
  int64_t unigram_lines = 0;  // pretrain.unigram_lines
};

struct DataPlan {
  std::optional<SplitSource> train, valid, test;  // absent: the config gives no data
  // Stream options of training (shuffled, train.batch_size) and of evaluation (file
  // order, batches of 256); the split's format, labels, part and rank are set on opening.
  StreamOptions train_stream, eval_stream;
  std::vector<std::string> labels;  // data.labels: declared label names (or a names file)
  bool multi_label = false;
  TextEncoderOptions encoder;
  TokenizerType tokenizer = TokenizerType::word;
  std::string tokenizer_model;  // SentencePiece model file
  VocabLimits vocab;
  // A run folder whose vocabulary and labels a fine-tuning run keeps (train.init_from);
  // empty: built from the training data.
  std::string vocabulary_from;
  std::vector<TransferSource> transfer;  // empty without train.distill.unlabeled/augment
  // pretrain.files: the training split is those unlabelled texts (and validation
  // pretrain.valid's), and training predicts masked tokens; absent: classification.
  std::optional<MaskedLmPlan> masked_lm;
  // Every option the count of the training data may depend on, as "key=value" lines (every
  // data.* and tokenizer.* option, model.type, run.seed): the vocabulary cache's key.
  std::string options_identity;

  const std::optional<SplitSource>& source(Split split) const;
};

// `input`: what the model of config.model.type reads.
DataPlan resolve_data(const SiftConfig& config, InputKind input);
// The same with that model's input kind (its traits', models/base/traits.h).
DataPlan resolve_data(const SiftConfig& config);

}  // namespace sift
