#include "framework/train/base/save_policy.h"

#include <gtest/gtest.h>

namespace sift {
namespace save_policy_test {

TEST(SavePolicy, EpochSavesAtEveryEpochsEndAndEndAtNone) {
  const int64_t table = 80'000'000;  // the fastText model's 2M x 10 floats
  EXPECT_TRUE(SavePolicy(SaveLast::epoch, table).saves_at_epoch_end(0.0));
  EXPECT_FALSE(SavePolicy(SaveLast::end, 0).saves_at_epoch_end(1e9));
}

// 80 MB at 300 MB/s: about 0.27 s a save, so an epoch end saves after 2.7 s of training.
TEST(SavePolicy, AutoSavesOnlyAfterTenTimesTheEstimatedSaveBeforeTheFirstIsTimed) {
  const SavePolicy p(SaveLast::automatic, 80'000'000);
  EXPECT_NEAR(p.save_seconds(), 0.2667, 1e-3);
  EXPECT_FALSE(p.saves_at_epoch_end(0.02));  // a TREC epoch of the fast path
  EXPECT_FALSE(p.saves_at_epoch_end(2.6));
  EXPECT_TRUE(p.saves_at_epoch_end(2.7));
}

TEST(SavePolicy, AutoUsesTheLastSavesMeasuredTimeOnceThereIsOne) {
  SavePolicy p(SaveLast::automatic, 80'000'000);
  p.saved(0.01);  // a fast disk
  EXPECT_TRUE(p.saves_at_epoch_end(0.1));
  EXPECT_FALSE(p.saves_at_epoch_end(0.09));
  p.saved(1.0);  // a slow one
  EXPECT_FALSE(p.saves_at_epoch_end(9.9));
  EXPECT_TRUE(p.saves_at_epoch_end(10.0));
}

TEST(SavePolicy, AutoSavesEveryEpochOfASmallModel) {
  // A 4 MB model (the SMS config's 100k buckets): 13 ms estimated, 0.13 s an epoch is enough.
  EXPECT_TRUE(SavePolicy(SaveLast::automatic, 4'000'000).saves_at_epoch_end(0.14));
}

}  // namespace save_policy_test
}  // namespace sift
