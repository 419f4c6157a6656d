#include "core/nearest_name.h"

#include <algorithm>
#include <cstdint>

namespace sift {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string nearest_name(const std::string& given, const std::vector<std::string>& names,
                         size_t max_distance) {
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const auto& name : names) {
    const size_t d = edit_distance(given, name);
    if (d <= max_distance && d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  return best;
}

}  // namespace sift
