// UniformFill::values (one loop compiled for AVX-512, AVX2 and plain x86-64, chosen at load)
// gives the values of at() bit for bit: a checkpoint stores a table's fill and recomputes it.
#include "core/uniform_fill.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace sift {
namespace uniform_fill_test {

// Indices where `values` and at() disagree bitwise, over [first, first + n).
size_t mismatches(const UniformFill& fill, uint64_t first, size_t n) {
  std::vector<float> out(n, -7.0f);
  fill.values(first, out.data(), n);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const float expected = fill.at(first + i);
    if (std::memcmp(&expected, &out[i], sizeof(float)) != 0) ++bad;
  }
  return bad;
}

TEST(UniformFill, ValuesAreTheValuesAtEachIndexBitForBit) {
  // fastText's ranges (+-1/dim) for dims 10, 50 and 300, and an uneven one.
  const std::vector<UniformFill> fills = {{0x0123456789abcdefULL, -0.1, 0.1},
                                          {42, -0.02, 0.02},
                                          {~uint64_t{0}, -1.0 / 300, 1.0 / 300},
                                          {7, -3.5, 11.25}};
  for (const auto& fill : fills) {
    EXPECT_EQ(mismatches(fill, 0, 1 << 20), 0u) << fill.state;
    // Starts and lengths that are no multiple of a vector's width.
    EXPECT_EQ(mismatches(fill, 3, 1001), 0u) << fill.state;
    EXPECT_EQ(mismatches(fill, (uint64_t{1} << 40) + 5, 77), 0u) << fill.state;
    EXPECT_EQ(mismatches(fill, 19999990, 1), 0u) << fill.state;
  }
}

TEST(UniformFill, ValuesLieInTheRangeAndDependOnTheState) {
  const UniformFill a{1, -0.1, 0.1}, b{2, -0.1, 0.1};
  std::vector<float> x(4096), y(4096);
  a.values(0, x.data(), x.size());
  b.values(0, y.data(), y.size());
  size_t same = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_GE(x[i], -0.1f);
    EXPECT_LT(x[i], 0.1f);
    same += x[i] == y[i];
  }
  EXPECT_LT(same, 10u);
}

}  // namespace uniform_fill_test
}  // namespace sift
