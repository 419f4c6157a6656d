// What an evaluation pass counts (confusion matrix or multi-label counts, loss,
// calibration, fastText's P@k) and the reports made of them, without LibTorch: the
// LibTorch models' evaluate (evaluation.h) and the torch-free trainer count alike.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "datasets/batch.h"
#include "framework/runtime/base/calibration.h"
#include "framework/runtime/base/confused_examples.h"
#include "framework/runtime/base/metrics.h"
#include "framework/runtime/base/multilabel_metrics.h"

namespace sift {

// Single-label (softmax, argmax) or multi-label (sigmoid, threshold) evaluation.
struct LabelMode {
  bool multi_label = false;
  double threshold = 0.5;
  int64_t top_k = 0;  // > 0: also count precision@k and recall@k as `fasttext test -k` does
  double top_k_threshold = 0.0;  // with top_k: only labels of at least this probability (its th)
  Loss loss = Loss::softmax;     // train.loss: ns and ova score by sigmoid
  // Masked-token pretraining (pretrain.files): the masked tokens' loss and accuracy.
  bool masked_lm = false;
};
LabelMode label_mode(const SiftConfig& config);

struct Evaluation {
  ConfusionMatrix confusion;  // single-label
  MultiLabelCounts multi;     // multi-label
  bool multi_label = false;
  double loss = 0.0;        // mean loss per example (cross-entropy, or BCE summed over labels)
  Calibration calibration;  // single-label: top probability against correctness
  // With LabelMode::top_k: fastText's P@k and R@k. Every example predicts its min(k, classes)
  // most probable labels, those of probability at least top_k_threshold; a prediction is
  // correct when it is one of the example's gold labels.
  int64_t top_k = 0;
  double top_k_threshold = 0.0;
  int64_t top_k_correct = 0;    // correct predictions among the top k, over all examples
  int64_t top_k_predicted = 0;  // predictions made: min(k, classes) x examples, less those
                                // under the threshold
  int64_t gold_labels = 0;      // gold labels, over all examples
  double precision_at_k() const { return ratio(top_k_correct, top_k_predicted); }
  double recall_at_k() const { return ratio(top_k_correct, gold_labels); }

  // Masked-token pretraining: predicted positions, those predicted right; no confusion.
  // masked_* counts every chosen position: the 80% shown as [MASK], the 10% shown as a
  // random token and the 10% left as they were, which give their answer away (a model that
  // copies its input gets them right). mask_* counts the [MASK] positions alone: on AG News
  // after 1,500 steps the first was 0.120 and the second 0.044.
  bool masked_lm = false;
  int64_t masked_tokens = 0;
  int64_t masked_correct = 0;
  int64_t mask_tokens = 0;
  int64_t mask_correct = 0;
  double masked_accuracy() const { return ratio(masked_correct, masked_tokens); }
  double mask_accuracy() const { return ratio(mask_correct, mask_tokens); }

  int64_t examples() const {
    return masked_lm ? masked_tokens : multi_label ? multi.examples() : confusion.total();
  }
  // The split's report: metrics, per-class table (and the confusion matrix, and the
  // reliability diagram's bins).
  nlohmann::json to_json(const std::vector<std::string>& names) const;
  std::string to_text(const std::vector<std::string>& names) const;
  // `fasttext test`'s three lines: N, P@k and R@k (top_k > 0).
  std::string fasttext_test_lines() const;
  // The headline figures: loss, accuracy, macro_f1 (multi-label also micro_f1, hamming_loss).
  nlohmann::json summary() const;
  std::string headline() const;  // "accuracy 0.9000, macro-F1 0.8000, loss 0.3000"
  // Each label's precision, recall, F1 and support: the "per_class" array of to_json,
  // without the confusion matrix (what every validation writes to metrics.jsonl).
  nlohmann::json per_class(const std::vector<std::string>& names) const;
  double f1(int64_t label) const { return multi_label ? multi.f1(label) : confusion.f1(label); }
};

// metrics.csv's validation columns: what Evaluation::summary reports in this label mode,
// and label_f1 when train.best_metric is that.
std::vector<std::string> validation_columns(const LabelMode& labels, BestMetric best);

// fastText's test: the top k labels of each example against its gold label(s); `top`
// holds each example's k label indices, row by row.
void count_top_k(const int64_t* top, int64_t k, const RawBatch& batch, Evaluation& result);

// Single-label: each example's prediction `p` and its probability `confidence`; with
// `confused`, a few misclassified texts (batches that carry them).
void count_predictions(const int64_t* p, const double* confidence, const RawBatch& batch,
                       Evaluation& result, ConfusedExamples* confused);

}  // namespace sift
