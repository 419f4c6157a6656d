#include "framework/runtime/base/evaluation_result.h"

#include <fmt/format.h>

#include <algorithm>

namespace sift {

LabelMode label_mode(const SiftConfig& config) {
  LabelMode mode;
  mode.multi_label = config.data.multi_label;
  mode.loss = config.train.loss;
  mode.threshold = config.train.threshold;
  mode.masked_lm = !config.pretrain.files.empty();
  return mode;
}

nlohmann::json Evaluation::to_json(const std::vector<std::string>& names) const {
  if (masked_lm) {
    return {{"examples", masked_tokens},
            {"masked_accuracy", masked_accuracy()},
            {"mask_tokens", mask_tokens},
            {"mask_accuracy", mask_accuracy()}};
  }
  nlohmann::json j = multi_label ? multi.to_json(names) : confusion.to_json(names);
  if (!multi_label && calibration.examples() > 0) j["calibration"] = calibration.to_json();
  if (top_k > 0) {
    j["k"] = top_k;
    j["precision_at_k"] = precision_at_k();
    j["recall_at_k"] = recall_at_k();
  }
  return j;
}

std::string Evaluation::to_text(const std::vector<std::string>& names) const {
  if (masked_lm) {
    return fmt::format(
        "masked tokens {}, masked-token accuracy {:.4f}; [MASK] tokens {}, accuracy at [MASK] "
        "{:.4f}; loss {:.4f}\n",
        masked_tokens, masked_accuracy(), mask_tokens, mask_accuracy(), loss);
  }
  std::string text = multi_label ? multi.to_text(names) : confusion.to_text(names);
  return top_k > 0 ? text + fasttext_test_lines() : text;
}

std::string Evaluation::fasttext_test_lines() const {
  // As `fasttext test` prints them (3 significant digits: std::setprecision(3)).
  return fmt::format("N\t{}\nP@{}\t{:.3g}\nR@{}\t{:.3g}\n", examples(), top_k, precision_at_k(),
                     top_k, recall_at_k());
}

nlohmann::json Evaluation::summary() const {
  if (masked_lm) {
    return {
        {"loss", loss}, {"masked_accuracy", masked_accuracy()}, {"mask_accuracy", mask_accuracy()}};
  }
  if (!multi_label) {
    return {{"loss", loss}, {"accuracy", confusion.accuracy()}, {"macro_f1", confusion.macro_f1()}};
  }
  return {{"loss", loss},
          {"accuracy", multi.subset_accuracy()},
          {"macro_f1", multi.macro_f1()},
          {"micro_f1", multi.micro_f1()},
          {"hamming_loss", multi.hamming_loss()}};
}

nlohmann::json Evaluation::per_class(const std::vector<std::string>& names) const {
  if (masked_lm) return nlohmann::json::array();
  return per_class_json(names, multi_label ? multi.class_scores() : confusion.class_scores());
}

std::string Evaluation::headline() const {
  if (masked_lm)
    return fmt::format("masked-token accuracy {:.4f}, accuracy at [MASK] {:.4f}, loss {:.4f}",
                       masked_accuracy(), mask_accuracy(), loss);
  const nlohmann::json s = summary();
  std::string line = fmt::format("accuracy {:.4f}, macro-F1 {:.4f}", s["accuracy"].get<double>(),
                                 s["macro_f1"].get<double>());
  if (multi_label) line += fmt::format(", micro-F1 {:.4f}", s["micro_f1"].get<double>());
  return line + fmt::format(", loss {:.4f}", loss);
}

std::vector<std::string> validation_columns(const LabelMode& labels, BestMetric best) {
  Evaluation e;
  e.multi_label = labels.multi_label;
  e.masked_lm = labels.masked_lm;
  const nlohmann::json summary = e.summary();
  std::vector<std::string> names;
  for (auto it = summary.begin(); it != summary.end(); ++it) names.push_back(it.key());
  if (best == BestMetric::label_f1) names.push_back("label_f1");
  return names;
}

void count_top_k(const int64_t* top, int64_t k, const RawBatch& batch, Evaluation& result) {
  const bool lists = !batch.label_starts.empty();
  for (int64_t i = 0; i < batch.size(); ++i) {
    const int64_t* gold =
        lists ? batch.label_lists.data() + batch.label_starts[i] : &batch.labels[i];
    const int64_t gold_count = lists ? batch.label_list_end(i) - batch.label_starts[i] : 1;
    for (int64_t j = 0; j < k; ++j) {
      if (top[i * k + j] < 0) continue;  // under the threshold: not predicted
      ++result.top_k_predicted;
      if (std::find(gold, gold + gold_count, top[i * k + j]) != gold + gold_count)
        ++result.top_k_correct;
    }
    result.gold_labels += gold_count;
  }
}

void count_predictions(const int64_t* p, const double* confidence, const RawBatch& batch,
                       Evaluation& result, ConfusedExamples* confused) {
  const bool texts = confused != nullptr && batch.texts.size() == batch.labels.size();
  for (int64_t i = 0; i < batch.size(); ++i) {
    result.confusion.add(batch.labels[i], p[i]);
    result.calibration.add(confidence[i], p[i] == batch.labels[i]);
    if (texts && p[i] != batch.labels[i]) {
      confused->add(batch.labels[i], p[i], batch.texts[i], result.confusion);
    }
  }
}

}  // namespace sift
