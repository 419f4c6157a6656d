// Multi-label classification metrics from per-label counts: micro- and macro-F1, subset
// accuracy (exact match), Hamming loss, per-label precision, recall and F1. Plain
// integers, so that ranks can sum them later.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "framework/runtime/base/metrics.h"

namespace sift {

class MultiLabelCounts {
 public:
  explicit MultiLabelCounts(int64_t classes = 0);

  // One record: truth and predicted hold one 0/1 flag per label.
  void add(const uint8_t* truth, const uint8_t* predicted);

  int64_t classes() const { return classes_; }
  int64_t examples() const { return examples_; }
  int64_t support(int64_t c) const { return tp_[c] + fn_[c]; }

  double precision(int64_t c) const;  // 0 when the label was never predicted
  double recall(int64_t c) const;     // 0 when the label never occurs
  double f1(int64_t c) const;
  double micro_precision() const;
  double micro_recall() const;
  double micro_f1() const;         // from the counts summed over labels
  double macro_f1() const;         // mean over labels that occur or are predicted
  double subset_accuracy() const;  // records whose predicted set equals the true set
  double hamming_loss() const;     // wrong label decisions / (records x labels)

  // {"accuracy" (= subset accuracy), "subset_accuracy", "micro_f1", "macro_f1",
  //  "micro_precision", "micro_recall", "hamming_loss", "examples", "per_class": [...]}
  nlohmann::json to_json(const std::vector<std::string>& names) const;
  std::string to_text(const std::vector<std::string>& names) const;

  // Every count as one flat vector, and back: what a process group sums over ranks.
  std::vector<int64_t> counts() const;
  static MultiLabelCounts from_counts(int64_t classes, const std::vector<int64_t>& counts);
  std::vector<ClassScores> class_scores() const;

 private:
  int64_t classes_;
  int64_t examples_ = 0;
  int64_t exact_ = 0;       // records predicted exactly
  int64_t wrong_bits_ = 0;  // label decisions that were wrong, over all records
  std::vector<int64_t> tp_, fp_, fn_;
};

}  // namespace sift
