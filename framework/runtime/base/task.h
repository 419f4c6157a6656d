// What a run learns from its data before training: the label set, the vocabulary and
// the encoder options; and the streams that read each split.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "datasets/example_stream.h"
#include "datasets/labels.h"
#include "datasets/sharded_stream.h"
#include "datasets/text_encoder.h"
#include "datasets/text_format.h"
#include "datasets/vocab.h"
#include "framework/runtime/base/data_plan.h"

namespace sift {

struct Task {
  LabelSet labels;
  std::shared_ptr<const Vocab> vocab;                   // word tokenizer
  std::shared_ptr<const SentencePieceModel> pieces;     // or SentencePiece
  std::shared_ptr<const WordPieceTokenizer> wordpiece;  // tokenizer.type wordpiece only
  TextEncoderOptions encoder;
  uint64_t train_records = 0;  // in the training part, counted by the vocabulary pass
  uint64_t train_skipped = 0;  // malformed records skipped in that pass
  // Records with a label and no text in that pass: trained on (as fastText does), counted
  // for the report. Not in the checkpoints: 0 after a resume.
  uint64_t train_empty_texts = 0;
  std::vector<uint64_t> label_counts;  // training records per label id
  // Masked-token pretraining (pretrain.files): no labels; the encoder has its masked-token head.
  bool masked_lm = false;
  // The vocabulary pass's cache (task_cache.h): "read" (counted by an earlier run),
  // "written" (counted now and kept) or empty (not cached).
  std::string vocabulary_cache;
};

// The files of a split and how to read them, or nothing when the plan has no data for
// it (its patterns expanded now).
struct SplitFiles {
  std::vector<std::string> files;
  TextFormat format;
  HashPart part = HashPart::all;
};
std::optional<SplitFiles> split_files(const DataPlan& plan, Split split);

// A split's records one by one (the vocabulary pass).
std::optional<ExampleStream> open_split(const DataPlan& plan, Split split,
                                        const LabelSet& declared_labels);

// A split's batches, read by data.workers threads. Training streams shuffle; others
// keep the file order. In a group of `world_size` processes, only rank `rank`'s part.
// `teacher`: distillation's second encoder (ShardedStream). `keep_text`: batches also
// carry each example's text (RawBatch::texts).
std::unique_ptr<ShardedStream> open_stream(const DataPlan& plan, Split split,
                                           const TextEncoder& encoder, const LabelSet& labels,
                                           bool training, int64_t rank = 0, int64_t world_size = 1,
                                           const TextEncoder* teacher = nullptr,
                                           bool keep_text = false);

// A transfer source's stream (data_plan.h TransferSource): this rank's part of its files,
// each text also in the teacher's encoding. A pattern that matches no file is refused
// naming its key (train.distill.unlabeled) and the pattern.
std::unique_ptr<ShardedStream> open_transfer_stream(const TransferSource& transfer,
                                                    const TextEncoder& encoder,
                                                    const LabelSet& labels,
                                                    const TextEncoder& teacher, int64_t rank,
                                                    int64_t world_size);

// "the test data (a.tsv, b.tsv) holds no record".
std::string empty_split_message(const std::string& split, const ShardedStream& stream);

// The encoder of a task (each worker thread copies it).
TextEncoder make_encoder(const Task& task);

// Writes a uniform sample (reservoir sampling over every shard, not the first lines) of
// at most `lines` training texts to `path`, one per line; returns how many it wrote.
uint64_t sample_training_text(const DataPlan& plan, uint64_t lines, const std::string& path);

// The labels a search may name before any training: data.labels, or those of the
// training part, read until `until` turns up (all of them, sorted, when it does not).
std::vector<std::string> training_labels(const DataPlan& plan, const std::string& until);

// train.best_label (train.best_metric label_f1) must be one of `labels`: a misspelt one
// would follow an F1 of 0.
void check_best_label(const TrainConfig& train, const LabelSet& labels);

// "a, b, c": a few of `names` for an error message ("..., 20 in all" past eight).
std::string some_labels(const std::vector<std::string>& names);

// One streaming pass over the training part: counts words into a bounded vocabulary,
// collects labels (unless data.labels declares them) and counts records. Read back from
// the vocabulary cache instead when an earlier run counted the same files with the same
// options (task_cache.h).
Task build_task(const DataPlan& plan);

// A new run's text files in `dir`: config.yaml (`given`, as loaded), the labels, the
// vocabulary or a copy of the SentencePiece model, the stop words.
void write_run_text(const std::string& dir, const SiftConfig& given, const Task& task,
                    const DataPlan& plan);

}  // namespace sift
