#include "framework/train/nonfinite.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

namespace sift {
namespace nonfinite_test {

TEST(TensorsFinite, FindsOneNonFiniteValueAnywhereInALargeTable) {
  // fp32 CPU tables take the plain pass; the double tensor goes through ATen.
  torch::Tensor table = torch::zeros({300001, 10});
  const torch::Tensor small = torch::ones({3}, torch::kFloat64);
  EXPECT_TRUE(tensors_finite({table, small}));
  const float inf = std::numeric_limits<float>::infinity();
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), inf, -inf}) {
    for (const int64_t at : {int64_t{0}, int64_t{1234567}, table.numel() - 1}) {
      table.view(-1)[at] = bad;
      EXPECT_FALSE(tensors_finite({small, table})) << bad << " at " << at;
      table.view(-1)[at] = 0.0f;
    }
  }
  EXPECT_TRUE(tensors_finite({table}));
  EXPECT_TRUE(tensors_finite({torch::full({4}, std::numeric_limits<float>::max())}));
  EXPECT_FALSE(tensors_finite({torch::full({2}, std::nan(""), torch::kFloat64)}));
}

}  // namespace nonfinite_test
}  // namespace sift
