// A few misclassified validation texts per (true, predicted) cell of a confusion matrix,
// for the report's most confused pairs. Bounded whatever the number of labels: at most
// `max_pairs` cells hold texts, `per_pair` each, every text cut to `max_chars`
// characters. When a new cell arrives and all slots are taken, it replaces the held cell
// with the fewest mistakes so far if it already has more: the cells that end up most
// confused are the large ones, and a large cell grows early.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/runtime/base/metrics.h"

namespace sift {

// `text` as one line of at most `max_chars` characters: control characters become
// spaces, bytes that are not UTF-8 become U+FFFD (so any JSON writer accepts it), and a
// cut text ends in "...".
std::string text_snippet(std::string_view text, size_t max_chars);

class ConfusedExamples {
 public:
  explicit ConfusedExamples(size_t per_pair = 3, size_t max_pairs = 256, size_t max_chars = 200);

  // One misclassified example; `counts` already counts it.
  void add(int64_t truth, int64_t predicted, std::string_view text, const ConfusionMatrix& counts);

  const std::vector<std::string>& texts(int64_t truth, int64_t predicted) const;
  size_t pairs_held() const { return cells_.size(); }

  // Every held cell, for another process to merge: [[truth, predicted, [texts]], ...].
  nlohmann::json held() const;
  // Adds the cells of held() from another rank (rank order: the first texts stay).
  void merge(const nlohmann::json& held, const ConfusionMatrix& counts);

  // The `top` largest off-diagonal cells of `counts`, largest first (ties: row-major
  // order): [{"true", "predicted", "count", "share_of_true", "texts": [...]}, ...].
  nlohmann::json most_confused(const ConfusionMatrix& counts, const std::vector<std::string>& names,
                               size_t top = 8) const;

 private:
  using Cell = std::pair<int64_t, int64_t>;
  bool make_room(const Cell& cell, const ConfusionMatrix& counts);
  // Where the next text of a cell goes, or null when it needs no more (or gets no slot).
  std::vector<std::string>* slot(int64_t truth, int64_t predicted, const ConfusionMatrix& counts);

  size_t per_pair_, max_pairs_, max_chars_;
  std::map<Cell, std::vector<std::string>> cells_;
};

// report.txt's lines for most_confused's pairs: "true -> predicted: count (share)" and
// the texts indented ("" without pairs).
std::string most_confused_text(const nlohmann::json& pairs);

}  // namespace sift
