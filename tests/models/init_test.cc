// fast_uniform_: the same seeded values whatever the number of LibTorch threads that
// fill the table, all within [lo, hi).
#include "models/init.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace sift {
namespace init_test {

torch::Tensor filled(int threads) {
  const int before = torch::get_num_threads();
  torch::set_num_threads(threads);
  torch::manual_seed(3);
  torch::Tensor t = torch::empty({300000, 10});  // several of parallel_for's grains
  fast_uniform_(t, -0.1, 0.1);
  torch::set_num_threads(before);
  return t;
}

TEST(FastUniform, FillsTheSameValuesWhateverTheThreadCount) {
  const torch::Tensor one = filled(1), two = filled(2);
  EXPECT_TRUE(torch::equal(one, two));
  EXPECT_GE(one.min().item<double>(), -0.1);
  EXPECT_LT(one.max().item<double>(), 0.1);
  // Uniform: the mean near 0 and the spread of U(-0.1, 0.1) (sd 0.0577).
  EXPECT_NEAR(one.mean().item<double>(), 0.0, 1e-3);
  EXPECT_NEAR(one.std().item<double>(), 0.2 / std::sqrt(12.0), 1e-3);
}

}  // namespace init_test
}  // namespace sift
