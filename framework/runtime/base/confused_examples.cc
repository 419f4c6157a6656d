#include "framework/runtime/base/confused_examples.h"

#include <fmt/format.h>

#include <algorithm>

#include "datasets/unicode.h"

namespace sift {

std::string text_snippet(std::string_view text, size_t max_chars) {
  std::string out;
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++chars) {
    if (chars == max_chars) return out + "\xE2\x80\xA6";  // U+2026 "..."
    const Utf8Char c = decode_utf8(text, i);
    if (c.cp < 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD, the replacement character
    } else if (c.cp < 0x20 || c.cp == 0x7f || (c.cp >= 0x80 && c.cp < 0xa0)) {
      out += ' ';
    } else {
      out.append(text.substr(i, c.length));
    }
    i += c.length;
  }
  return out;
}

ConfusedExamples::ConfusedExamples(size_t per_pair, size_t max_pairs, size_t max_chars)
    : per_pair_(per_pair), max_pairs_(max_pairs), max_chars_(max_chars) {}

bool ConfusedExamples::make_room(const Cell& cell, const ConfusionMatrix& counts) {
  if (cells_.size() < max_pairs_) return true;
  auto smallest = cells_.end();
  for (auto it = cells_.begin(); it != cells_.end(); ++it) {
    if (smallest == cells_.end() ||
        counts.count(it->first.first, it->first.second) <
            counts.count(smallest->first.first, smallest->first.second)) {
      smallest = it;
    }
  }
  if (smallest == cells_.end() || counts.count(smallest->first.first, smallest->first.second) >=
                                      counts.count(cell.first, cell.second)) {
    return false;
  }
  cells_.erase(smallest);
  return true;
}

std::vector<std::string>* ConfusedExamples::slot(int64_t truth, int64_t predicted,
                                                 const ConfusionMatrix& counts) {
  if (per_pair_ == 0 || truth == predicted) return nullptr;
  const Cell cell{truth, predicted};
  auto it = cells_.find(cell);
  if (it == cells_.end()) {
    if (!make_room(cell, counts)) return nullptr;
    it = cells_.emplace(cell, std::vector<std::string>()).first;
  }
  return it->second.size() < per_pair_ ? &it->second : nullptr;
}

void ConfusedExamples::add(int64_t truth, int64_t predicted, std::string_view text,
                           const ConfusionMatrix& counts) {
  if (auto* texts = slot(truth, predicted, counts))
    texts->push_back(text_snippet(text, max_chars_));
}

const std::vector<std::string>& ConfusedExamples::texts(int64_t truth, int64_t predicted) const {
  static const std::vector<std::string> none;
  const auto it = cells_.find({truth, predicted});
  return it == cells_.end() ? none : it->second;
}

nlohmann::json ConfusedExamples::held() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [cell, texts] : cells_) out.push_back({cell.first, cell.second, texts});
  return out;
}

void ConfusedExamples::merge(const nlohmann::json& held, const ConfusionMatrix& counts) {
  for (const auto& entry : held) {
    const auto truth = entry[0].get<int64_t>(), predicted = entry[1].get<int64_t>();
    for (const auto& text : entry[2]) {  // already snippets
      if (auto* texts = slot(truth, predicted, counts)) texts->push_back(text.get<std::string>());
    }
  }
}

nlohmann::json ConfusedExamples::most_confused(const ConfusionMatrix& counts,
                                               const std::vector<std::string>& names,
                                               size_t top) const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [t, p] : counts.most_confused(top)) {
    const int64_t row = counts.row_sum(t);
    out.push_back({{"true", names.at(static_cast<size_t>(t))},
                   {"predicted", names.at(static_cast<size_t>(p))},
                   {"count", counts.count(t, p)},
                   {"share_of_true", static_cast<double>(counts.count(t, p)) / row},
                   {"texts", texts(t, p)}});
  }
  return out;
}

std::string most_confused_text(const nlohmann::json& pairs) {
  std::string text =
      pairs.empty() ? "" : "most confused pairs (true -> predicted), with examples\n";
  for (const auto& p : pairs) {
    text += fmt::format("{} -> {}: {} ({:.1f}% of {})\n", p["true"].get<std::string>(),
                        p["predicted"].get<std::string>(), p["count"].get<int64_t>(),
                        100.0 * p["share_of_true"].get<double>(), p["true"].get<std::string>());
    for (const auto& t : p["texts"]) text += "    " + t.get<std::string>() + "\n";
  }
  return text.empty() ? text : text + "\n";
}

}  // namespace sift
