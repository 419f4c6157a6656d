#include "config/metric_table.h"

#include <fmt/format.h>

#include "core/error.h"

namespace sift {

const std::vector<MetricName>& metric_table() {
  // key, title, multi-label title, multi-label only, lower is better, summary,
  // chooses best, score
  static const std::vector<MetricName> table = {
      {"accuracy", "accuracy", "subset accuracy", false, false, true, true, true},
      {"macro_f1", "macro-F1", "macro-F1", false, false, true, true, true},
      {"micro_f1", "micro-F1", "micro-F1", true, false, true, true, true},
      {"micro_precision", "micro precision", "micro precision", true, false, false, false, false},
      {"micro_recall", "micro recall", "micro recall", true, false, false, false, false},
      {"hamming_loss", "Hamming loss", "Hamming loss", true, true, true, false, false},
      {"precision_at_k", "precision at k", "precision at k", false, false, true, false, false},
      {"recall_at_k", "recall at k", "recall at k", false, false, true, false, false},
      {"loss", "loss", "loss", false, true, false, true, false},
      // The F1 of train.best_label (fastText's -autotune-metric f1:LABEL).
      {"label_f1", "label F1", "label F1", false, false, false, true, false},
      // Masked-token pretraining (`sift pretrain`): the chosen tokens predicted right (the
      // 10% left unchanged included), and those shown as [MASK] alone.
      {"masked_accuracy", "masked-token accuracy", "masked-token accuracy", false, false, true,
       true, false},
      {"mask_accuracy", "accuracy at [MASK]", "accuracy at [MASK]", false, false, true, false,
       false}};
  return table;
}

const MetricName& metric_named(const std::string& key) {
  for (const auto& m : metric_table()) {
    if (key == m.key) return m;
  }
  throw Error(fmt::format("no metric '{}'", key));
}

std::vector<std::string> metric_keys(bool MetricName::*pick) {
  std::vector<std::string> keys;
  for (const auto& m : metric_table()) {
    if (m.*pick) keys.push_back(m.key);
  }
  return keys;
}

}  // namespace sift
