// The metrics a run reports, declared once: the key that report.json, metrics.jsonl
// ("valid_" + key), cv.json, train.best_metric and `sift tune --metric` spell, and the
// words the text summary and the HTML report write. train.best_metric's values
// (BestMetric, enums.h) are the rows that can choose best.ckpt, in the table's order.
#pragma once

#include <string>
#include <vector>

namespace sift {

struct MetricName {
  const char* key;                // "macro_f1"
  const char* title;              // "macro-F1"
  const char* multi_label_title;  // a multi-label run's figure ("subset accuracy")
  bool multi_label_only;          // micro-averaged scores, Hamming loss
  bool lower_is_better;           // loss, Hamming loss
  bool summary;                   // in the closing summary (`sift train`, `sift eval`)
  bool chooses_best;              // a value of train.best_metric
  bool score;                     // what `sift cv` reports and `sift tune` maximises
};

const std::vector<MetricName>& metric_table();

// The row of `key`; throws sift::Error for a key the table does not hold.
const MetricName& metric_named(const std::string& key);

// The keys of the rows `pick` takes, in the table's order.
std::vector<std::string> metric_keys(bool MetricName::*pick);

}  // namespace sift
