#include "framework/runtime/base/multilabel_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace sift {
MultiLabelCounts::MultiLabelCounts(int64_t classes)
    : classes_(classes),
      tp_(static_cast<size_t>(classes), 0),
      fp_(static_cast<size_t>(classes), 0),
      fn_(static_cast<size_t>(classes), 0) {}

void MultiLabelCounts::add(const uint8_t* truth, const uint8_t* predicted) {
  bool exact = true;
  for (int64_t c = 0; c < classes_; ++c) {
    const bool t = truth[c] != 0, p = predicted[c] != 0;
    tp_[c] += t && p;
    fp_[c] += !t && p;
    fn_[c] += t && !p;
    if (t != p) {
      exact = false;
      ++wrong_bits_;
    }
  }
  exact_ += exact;
  ++examples_;
}

double MultiLabelCounts::precision(int64_t c) const { return ratio(tp_[c], tp_[c] + fp_[c]); }
double MultiLabelCounts::recall(int64_t c) const { return ratio(tp_[c], tp_[c] + fn_[c]); }
double MultiLabelCounts::f1(int64_t c) const { return harmonic(precision(c), recall(c)); }

double MultiLabelCounts::micro_precision() const {
  int64_t tp = 0, fp = 0;
  for (int64_t c = 0; c < classes_; ++c) tp += tp_[c], fp += fp_[c];
  return ratio(tp, tp + fp);
}

double MultiLabelCounts::micro_recall() const {
  int64_t tp = 0, fn = 0;
  for (int64_t c = 0; c < classes_; ++c) tp += tp_[c], fn += fn_[c];
  return ratio(tp, tp + fn);
}

double MultiLabelCounts::micro_f1() const { return harmonic(micro_precision(), micro_recall()); }

double MultiLabelCounts::macro_f1() const {
  return mean_f1(
      classes_, [this](int64_t c) { return f1(c); },
      [this](int64_t c) { return tp_[c] + fp_[c] + fn_[c] != 0; });
}

double MultiLabelCounts::subset_accuracy() const { return ratio(exact_, examples_); }

double MultiLabelCounts::hamming_loss() const { return ratio(wrong_bits_, examples_ * classes_); }

std::vector<ClassScores> MultiLabelCounts::class_scores() const {
  std::vector<ClassScores> scores;
  for (int64_t c = 0; c < classes_; ++c) {
    scores.push_back({precision(c), recall(c), f1(c), support(c)});
  }
  return scores;
}

nlohmann::json MultiLabelCounts::to_json(const std::vector<std::string>& names) const {
  const nlohmann::json per_class = per_class_json(names, class_scores());
  return {{"accuracy", subset_accuracy()},
          {"subset_accuracy", subset_accuracy()},
          {"micro_f1", micro_f1()},
          {"macro_f1", macro_f1()},
          {"micro_precision", micro_precision()},
          {"micro_recall", micro_recall()},
          {"hamming_loss", hamming_loss()},
          {"examples", examples_},
          {"per_class", per_class}};
}

std::string MultiLabelCounts::to_text(const std::vector<std::string>& names) const {
  std::string out = per_class_table(names, class_scores());
  out += fmt::format(
      "micro-F1 {:.4f} (precision {:.4f}, recall {:.4f})  macro-F1 {:.4f}\n"
      "subset accuracy {:.4f}  Hamming loss {:.4f}  examples {}\n",
      micro_f1(), micro_precision(), micro_recall(), macro_f1(), subset_accuracy(), hamming_loss(),
      examples_);
  return out;
}

std::vector<int64_t> MultiLabelCounts::counts() const {
  std::vector<int64_t> out{examples_, exact_, wrong_bits_};
  for (const auto* v : {&tp_, &fp_, &fn_}) out.insert(out.end(), v->begin(), v->end());
  return out;
}

MultiLabelCounts MultiLabelCounts::from_counts(int64_t classes,
                                               const std::vector<int64_t>& counts) {
  MultiLabelCounts m(classes);
  if (static_cast<int64_t>(counts.size()) != 3 + 3 * classes) {
    throw std::invalid_argument("MultiLabelCounts::from_counts: wrong number of counts");
  }
  m.examples_ = counts[0];
  m.exact_ = counts[1];
  m.wrong_bits_ = counts[2];
  auto at = counts.begin() + 3;
  for (auto* v : {&m.tp_, &m.fp_, &m.fn_}) {
    std::copy(at, at + classes, v->begin());
    at += classes;
  }
  return m;
}

}  // namespace sift
