// Classification metrics from a confusion matrix: accuracy, per-class precision, recall
// and F1, macro-F1. Plain integers, so that ranks can add their matrices up.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sift {

// a / b, or 0 when b is 0: every rate of the reports.
inline double ratio(int64_t a, int64_t b) { return b == 0 ? 0.0 : static_cast<double>(a) / b; }
// The harmonic mean of p and r (F1 of a precision and a recall), 0 when both are 0.
inline double harmonic(double p, double r) { return p + r == 0.0 ? 0.0 : 2.0 * p * r / (p + r); }
// Macro F1: the mean of f1(c) over the classes c with present(c). Classes absent from both
// truth and predictions say nothing about this data set.
template <class F1, class Present>
double mean_f1(int64_t classes, F1 f1, Present present) {
  double sum = 0.0;
  int64_t n = 0;
  for (int64_t c = 0; c < classes; ++c) {
    if (!present(c)) continue;
    sum += f1(c);
    ++n;
  }
  return n == 0 ? 0.0 : sum / static_cast<double>(n);
}

// One class's scores, as single- and multi-label reports list them.
struct ClassScores {
  double precision = 0, recall = 0, f1 = 0;
  int64_t support = 0;
};

// The "per_class" array of a JSON report and the per-class table of a text report.
nlohmann::json per_class_json(const std::vector<std::string>& names,
                              const std::vector<ClassScores>& scores);
std::string per_class_table(const std::vector<std::string>& names,
                            const std::vector<ClassScores>& scores);

// The nonzero cells only, with each row's and column's sum: a run with 10,000 labels
// (fastText's tag prediction) would hold 100M dense cells, 800 MB.
class ConfusionMatrix {
 public:
  explicit ConfusionMatrix(int64_t classes = 0);

  void add(int64_t truth, int64_t predicted, int64_t n = 1);
  int64_t count(int64_t truth, int64_t predicted) const;
  int64_t total() const { return total_; }
  int64_t classes() const { return classes_; }
  // The nonzero cells as flat (truth, predicted, count) triples in row-major order, and a
  // matrix made from such triples (a cell listed twice counts twice): ranks gather each
  // other's and add them up.
  std::vector<int64_t> cells() const;
  static ConfusionMatrix from_cells(int64_t classes, const std::vector<int64_t>& triples);

  double accuracy() const;
  double precision(int64_t c) const;  // 0 when the class was never predicted
  double recall(int64_t c) const;     // 0 when the class never occurs
  double f1(int64_t c) const;
  double macro_f1() const;  // unweighted mean over classes that occur or are predicted

  // Past these many labels report.json lists the matrix's nonzero cells and report.txt its
  // largest mistakes: at 2,000 labels the dense matrix (4M cells) made report.html and its
  // JSON take most of a 90 s run and 2.4 GB (bench/many_labels.sh, issue #18).
  static constexpr int64_t kDenseJsonLabels = 100;
  static constexpr int64_t kTextMatrixLabels = 40;

  // {"accuracy", "macro_f1", "examples", "per_class": [...], "confusion": [[...]]}; past
  // kDenseJsonLabels labels "confusion_cells": [[truth, predicted, count], ...] instead,
  // the nonzero cells in row-major order.
  nlohmann::json to_json(const std::vector<std::string>& names) const;
  // A human-readable report: per-class table and the matrix (past kTextMatrixLabels labels,
  // its 20 largest off-diagonal cells).
  std::string to_text(const std::vector<std::string>& names) const;
  // Markdown (TensorBoard's text plugin): the matrix up to `max_classes` labels, beyond
  // that a table of its 20 largest off-diagonal cells. A '|' in a label is escaped.
  std::string to_markdown(const std::vector<std::string>& names, int64_t max_classes = 32) const;

  // The `top` largest off-diagonal cells as (truth, predicted), largest first; ties in
  // row-major order.
  std::vector<std::pair<int64_t, int64_t>> most_confused(size_t top) const;
  int64_t row_sum(int64_t c) const { return rows_[static_cast<size_t>(c)]; }  // true label c
  std::vector<ClassScores> class_scores() const;

 private:
  int64_t column_sum(int64_t c) const { return columns_[static_cast<size_t>(c)]; }

  int64_t classes_;
  int64_t total_ = 0;
  std::unordered_map<int64_t, int64_t> cells_;  // truth * classes + predicted: count > 0
  std::vector<int64_t> rows_, columns_;         // examples per true and predicted label
};

}  // namespace sift
