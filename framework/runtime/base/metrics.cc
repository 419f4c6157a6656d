#include "framework/runtime/base/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace sift {

ConfusionMatrix::ConfusionMatrix(int64_t classes)
    : classes_(classes),
      rows_(static_cast<size_t>(classes), 0),
      columns_(static_cast<size_t>(classes), 0) {}

ConfusionMatrix ConfusionMatrix::from_cells(int64_t classes, const std::vector<int64_t>& triples) {
  if (triples.size() % 3 != 0) throw std::invalid_argument("ConfusionMatrix: cells are triples");
  ConfusionMatrix m(classes);
  for (size_t i = 0; i < triples.size(); i += 3) {
    const int64_t t = triples[i], p = triples[i + 1];
    if (t < 0 || t >= classes || p < 0 || p >= classes || triples[i + 2] < 0) {
      throw std::invalid_argument("ConfusionMatrix: a cell outside the matrix");
    }
    m.add(t, p, triples[i + 2]);
  }
  return m;
}

void ConfusionMatrix::add(int64_t truth, int64_t predicted, int64_t n) {
  if (n == 0) return;
  cells_[truth * classes_ + predicted] += n;
  rows_[static_cast<size_t>(truth)] += n;
  columns_[static_cast<size_t>(predicted)] += n;
  total_ += n;
}

int64_t ConfusionMatrix::count(int64_t truth, int64_t predicted) const {
  const auto it = cells_.find(truth * classes_ + predicted);
  return it == cells_.end() ? 0 : it->second;
}

std::vector<int64_t> ConfusionMatrix::cells() const {
  std::vector<std::pair<int64_t, int64_t>> sorted(cells_.begin(), cells_.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> triples;
  triples.reserve(sorted.size() * 3);
  for (const auto& [key, n] : sorted) {
    triples.insert(triples.end(), {key / classes_, key % classes_, n});
  }
  return triples;
}

double ConfusionMatrix::accuracy() const {
  int64_t correct = 0;
  for (int64_t c = 0; c < classes_; ++c) correct += count(c, c);
  return ratio(correct, total_);
}

double ConfusionMatrix::precision(int64_t c) const { return ratio(count(c, c), column_sum(c)); }
double ConfusionMatrix::recall(int64_t c) const { return ratio(count(c, c), row_sum(c)); }
double ConfusionMatrix::f1(int64_t c) const { return harmonic(precision(c), recall(c)); }

double ConfusionMatrix::macro_f1() const {
  return mean_f1(
      classes_, [this](int64_t c) { return f1(c); },
      [this](int64_t c) { return row_sum(c) != 0 || column_sum(c) != 0; });
}

nlohmann::json per_class_json(const std::vector<std::string>& names,
                              const std::vector<ClassScores>& scores) {
  nlohmann::json per_class = nlohmann::json::array();
  for (size_t c = 0; c < scores.size(); ++c) {
    per_class.push_back({{"label", names[c]},
                         {"precision", scores[c].precision},
                         {"recall", scores[c].recall},
                         {"f1", scores[c].f1},
                         {"support", scores[c].support}});
  }
  return per_class;
}

namespace {

// The label column of the text reports: as wide as the longest name, "label" at least.
size_t label_width(const std::vector<std::string>& names) {
  size_t width = 5;
  for (const auto& n : names) width = std::max(width, n.size());
  return width;
}

}  // namespace

std::string per_class_table(const std::vector<std::string>& names,
                            const std::vector<ClassScores>& scores) {
  const size_t width = label_width(names);
  std::string out = fmt::format("{:<{}}  precision  recall     f1  support\n", "label", width);
  for (size_t c = 0; c < scores.size(); ++c) {
    out += fmt::format("{:<{}}  {:9.4f}  {:6.4f}  {:6.4f}  {:7}\n", names[c], width,
                       scores[c].precision, scores[c].recall, scores[c].f1, scores[c].support);
  }
  return out;
}

std::vector<ClassScores> ConfusionMatrix::class_scores() const {
  std::vector<ClassScores> scores;
  for (int64_t c = 0; c < classes_; ++c) {
    scores.push_back({precision(c), recall(c), f1(c), row_sum(c)});
  }
  return scores;
}

nlohmann::json ConfusionMatrix::to_json(const std::vector<std::string>& names) const {
  nlohmann::json j = {{"accuracy", accuracy()},
                      {"macro_f1", macro_f1()},
                      {"examples", total_},
                      {"per_class", per_class_json(names, class_scores())}};
  nlohmann::json& matrix = j[classes_ <= kDenseJsonLabels ? "confusion" : "confusion_cells"];
  matrix = nlohmann::json::array();
  if (classes_ > kDenseJsonLabels) {
    const std::vector<int64_t> triples = cells();
    for (size_t i = 0; i < triples.size(); i += 3) {
      matrix.push_back({triples[i], triples[i + 1], triples[i + 2]});
    }
    return j;
  }
  for (int64_t c = 0; c < classes_; ++c) {
    nlohmann::json row = nlohmann::json::array();
    for (int64_t p = 0; p < classes_; ++p) row.push_back(count(c, p));
    matrix.push_back(std::move(row));
  }
  return j;
}

std::string ConfusionMatrix::to_text(const std::vector<std::string>& names) const {
  std::string out = per_class_table(names, class_scores());
  out += fmt::format("accuracy {:.4f}  macro-F1 {:.4f}  examples {}\n\n", accuracy(), macro_f1(),
                     total_);
  if (classes_ > kTextMatrixLabels) {
    out +=
        fmt::format("{} labels: the 20 largest mistakes (true -> predicted: examples)\n", classes_);
    for (const auto& [t, p] : most_confused(20)) {
      out += fmt::format("  {} -> {}: {}\n", names[t], names[p], count(t, p));
    }
    return out;
  }
  out += "confusion matrix (rows: true label, columns: predicted)\n";
  const size_t width = label_width(names);
  out += fmt::format("{:<{}}", "", width);
  for (int64_t p = 0; p < classes_; ++p) out += fmt::format(" {:>7}", p);
  out += "\n";
  for (int64_t c = 0; c < classes_; ++c) {
    out += fmt::format("{:<{}}", names[c], width);
    for (int64_t p = 0; p < classes_; ++p) out += fmt::format(" {:>7}", count(c, p));
    out += fmt::format("   ({} = {})\n", c, names[c]);
  }
  return out;
}

std::vector<std::pair<int64_t, int64_t>> ConfusionMatrix::most_confused(size_t top) const {
  std::vector<std::pair<int64_t, int64_t>> cells;
  for (const auto& [key, n] : cells_) {
    if (key / classes_ != key % classes_) cells.emplace_back(key / classes_, key % classes_);
  }
  const size_t shown = std::min(top, cells.size());
  std::partial_sort(cells.begin(), cells.begin() + static_cast<std::ptrdiff_t>(shown), cells.end(),
                    [&](const auto& a, const auto& b) {
                      const int64_t ca = count(a.first, a.second), cb = count(b.first, b.second);
                      return ca != cb ? ca > cb : a < b;
                    });
  cells.resize(shown);
  return cells;
}

namespace {

std::string markdown_cell(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|' || c == '\\') out += '\\';
    out += c == '\n' || c == '\r' ? ' ' : c;
  }
  return out;
}

}  // namespace

std::string ConfusionMatrix::to_markdown(const std::vector<std::string>& names,
                                         int64_t max_classes) const {
  if (classes_ > max_classes) {
    std::string out = fmt::format(
        "{} labels: the 20 largest mistakes\n\n| true | predicted | examples |\n|---|---|---|\n",
        classes_);
    for (const auto& [t, p] : most_confused(20)) {
      out += fmt::format("| {} | {} | {} |\n", markdown_cell(names[t]), markdown_cell(names[p]),
                         count(t, p));
    }
    return out;
  }
  std::string out = "| true / predicted |";
  std::string rule = "|---|";
  for (int64_t p = 0; p < classes_; ++p) {
    out += " " + markdown_cell(names[p]) + " |";
    rule += "---|";
  }
  out += "\n" + rule + "\n";
  for (int64_t t = 0; t < classes_; ++t) {
    out += "| " + markdown_cell(names[t]) + " |";
    for (int64_t p = 0; p < classes_; ++p) out += fmt::format(" {} |", count(t, p));
    out += "\n";
  }
  return out;
}

}  // namespace sift
