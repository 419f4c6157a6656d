// Where `sift serve` cuts a padded model's batch into runs (tools/serve/batch_runs.h).
#include "tools/serve/batch_runs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace sift::serve {
namespace {

using Ends = std::vector<size_t>;

// The cost of `ends` over `lengths` (ascending): padded tokens plus `run_cost` per run;
// max() when a run of several texts passes `max_tokens`.
int64_t cost_of(const std::vector<int64_t>& lengths, const Ends& ends, int64_t run_cost,
                int64_t max_tokens) {
  int64_t cost = 0;
  size_t start = 0;
  for (size_t end : ends) {
    const int64_t padded = static_cast<int64_t>(end - start) * lengths[end - 1];
    if (end - start > 1 && padded > max_tokens) return std::numeric_limits<int64_t>::max();
    cost += run_cost + padded;
    start = end;
  }
  return cost;
}

TEST(CutRuns, OneLengthIsOneRunAndNoTextsNoRun) {
  EXPECT_EQ(cut_runs({}, 32, 8192), Ends{});
  EXPECT_EQ(cut_runs({7}, 32, 8192), Ends{1});
  EXPECT_EQ(cut_runs({5, 5, 5, 5}, 32, 8192), Ends{4});
  EXPECT_EQ(cut_runs({5, 5, 5, 5}, 0, 8192), Ends{4});
}

TEST(CutRuns, CutsWhereThePaddingSavedPassesARunsCost) {
  // One run: 32 + 8 x 20 = 192; short and long apart: 32 + 4 + 32 + 80 = 148.
  EXPECT_EQ(cut_runs({1, 1, 1, 1, 20, 20, 20, 20}, 32, 8192), (Ends{4, 8}));
  // A run costing more than the padding saves: one run.
  EXPECT_EQ(cut_runs({1, 1, 1, 1, 20, 20, 20, 20}, 100, 8192), Ends{8});
  // No cost: a run per length.
  EXPECT_EQ(cut_runs({1, 1, 2, 2, 3}, 0, 8192), (Ends{2, 4, 5}));
}

TEST(CutRuns, NoRunOfSeveralTextsPassesTheTokenBudget) {
  EXPECT_EQ(cut_runs({10, 10, 10, 10}, 1000, 20), (Ends{2, 4}));
  EXPECT_EQ(cut_runs({50}, 32, 20), Ends{1});  // alone, whatever its length
  EXPECT_EQ(cut_runs({5, 50}, 1000, 20), (Ends{1, 2}));
}

TEST(CutRuns, FindsTheCheapestCutsOfRandomBatches) {
  std::mt19937 rng(39);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = 1 + rng() % 10;
    std::vector<int64_t> lengths(n);
    for (auto& l : lengths) l = 1 + static_cast<int64_t>(rng() % 60);
    std::sort(lengths.begin(), lengths.end());
    const int64_t run_cost = static_cast<int64_t>(rng() % 80);
    const int64_t max_tokens = 40 + static_cast<int64_t>(rng() % 400);
    // Every way to cut: bit i set = a cut after text i.
    int64_t best = std::numeric_limits<int64_t>::max();
    for (uint32_t cuts = 0; cuts < (1u << (n - 1)); ++cuts) {
      Ends ends;
      for (size_t i = 0; i + 1 < n; ++i) {
        if (cuts & (1u << i)) ends.push_back(i + 1);
      }
      ends.push_back(n);
      best = std::min(best, cost_of(lengths, ends, run_cost, max_tokens));
    }
    const Ends got = cut_runs(lengths, run_cost, max_tokens);
    ASSERT_FALSE(got.empty());
    EXPECT_EQ(got.back(), n);
    EXPECT_TRUE(std::is_sorted(got.begin(), got.end()));
    EXPECT_EQ(cost_of(lengths, got, run_cost, max_tokens), best) << "trial " << trial;
  }
}

}  // namespace
}  // namespace sift::serve
