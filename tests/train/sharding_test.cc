// run.shard's slices of the flat parameter space (sharding.h): contiguous, nearly equal,
// cut inside a tensor on 64-element steps from its start.
#include "framework/train/sharding.h"

#include <gtest/gtest.h>

namespace sift {
namespace sharding_test {

void expect_slices(const std::vector<int64_t>& numels, int64_t ranks) {
  const std::vector<int64_t> cuts = shard_cuts(numels, ranks);
  ASSERT_EQ(cuts.size(), static_cast<size_t>(ranks + 1));
  int64_t total = 0;
  std::vector<int64_t> starts;
  for (const int64_t n : numels) {
    starts.push_back(total);
    total += n;
  }
  EXPECT_EQ(cuts.front(), 0);
  EXPECT_EQ(cuts.back(), total);
  for (int64_t r = 0; r < ranks; ++r) {
    const int64_t length = cuts[r + 1] - cuts[r];
    // Within one 64-element step of an even share.
    EXPECT_LE(std::abs(length - total / ranks), 64) << "rank " << r << " of " << ranks;
    if (r == 0) continue;
    int64_t start = 0;  // the tensor the cut falls in
    for (const int64_t s : starts) {
      if (s <= cuts[r]) start = s;
    }
    EXPECT_EQ((cuts[r] - start) % 64, 0) << "cut " << cuts[r];
  }
}

// One table of 10M buckets x 100 (fastText's) and a few small tensors: the table itself
// is split, so every rank holds about a quarter.
TEST(ShardCuts, SplitOneHugeTableEvenlyOverTheRanks) {
  expect_slices({1'000'000'000, 100, 3}, 4);
  expect_slices({1'000'000'000, 100, 3}, 3);
}

TEST(ShardCuts, AreNearlyEqualAndAlignedForManyTensorsAndUnevenCounts) {
  expect_slices({5000, 33, 1, 70000, 129, 8191, 400000}, 2);
  expect_slices({5000, 33, 1, 70000, 129, 8191, 400000}, 3);
  expect_slices({5000, 33, 1, 70000, 129, 8191, 400000}, 7);
}

}  // namespace sharding_test
}  // namespace sift
