// SplitMix64: the n-th value drawn directly (splitmix64_nth, for filling a table in
// parallel) is the one n calls of splitmix64 return.
#include "core/splitmix.h"

#include <gtest/gtest.h>

namespace sift {
namespace splitmix_test {

TEST(SplitMix, TheNthValueIsWhatTheNthCallReturns) {
  const uint64_t start = 0x1234567890ABCDEFULL;
  uint64_t state = start;
  for (uint64_t n = 1; n <= 1000; ++n) {
    const uint64_t called = splitmix64(state);
    ASSERT_EQ(splitmix64_nth(start, n), called) << "n = " << n;
  }
  EXPECT_NE(splitmix64_nth(start, 1), splitmix64_nth(start, 2));
}

}  // namespace splitmix_test
}  // namespace sift
