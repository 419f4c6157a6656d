#include "tools/serve/batch_runs.h"

#include <limits>
#include <utility>

namespace sift::serve {

std::vector<size_t> cut_runs(const std::vector<int64_t>& lengths, int64_t run_cost,
                             int64_t max_tokens) {
  const size_t n = lengths.size();
  if (n == 0) return {};
  // best[j]: the least (cost, runs) of the first j texts (of two cuts as cheap, the one with
  // fewer runs); from[j]: where its last run starts. A run [i, j) costs run_cost + (j - i) *
  // lengths[j - 1] (ascending: its last text is its longest).
  using Cost = std::pair<int64_t, size_t>;
  const Cost none{std::numeric_limits<int64_t>::max(), 0};
  std::vector<Cost> best(n + 1, none);
  std::vector<size_t> from(n + 1, 0);
  best[0] = {0, 0};
  for (size_t j = 1; j <= n; ++j) {
    for (size_t i = j; i-- > 0;) {
      const int64_t padded = static_cast<int64_t>(j - i) * lengths[j - 1];
      if (i + 1 < j && padded > max_tokens) break;  // longer runs only grow
      if (best[i] == none) continue;
      const Cost cost{best[i].first + run_cost + padded, best[i].second + 1};
      if (cost < best[j]) {
        best[j] = cost;
        from[j] = i;
      }
    }
  }
  std::vector<size_t> ends;
  for (size_t j = n; j > 0; j = from[j]) ends.insert(ends.begin(), j);
  return ends;
}

}  // namespace sift::serve
