#include "framework/runtime/loss.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace sift {
namespace {

// Two records over 3 labels: {0, 2} and {1}.
RawBatch two_records() {
  RawBatch b;
  b.ids = {1, 2, 3};
  b.offsets = {0, 2};
  b.labels = {0, 1};
  b.label_lists = {0, 2, 1};
  b.label_starts = {0, 2};
  return b;
}

double bce(double logit, double target, double pos_weight = 1.0) {
  const double p = 1.0 / (1.0 + std::exp(-logit));
  return -(pos_weight * target * std::log(p) + (1.0 - target) * std::log(1.0 - p));
}

TEST(Loss, MultiHotTargets) {
  auto t = multi_hot(two_records(), 3);
  EXPECT_TRUE(torch::equal(t, torch::tensor({{1.0f, 0.0f, 1.0f}, {0.0f, 1.0f, 0.0f}})));
}

TEST(Loss, MultiLabelIsBinaryCrossEntropySummedOverLabels) {
  auto logits = torch::tensor({{2.0f, -1.0f, 0.5f}, {0.0f, 1.5f, -3.0f}});
  const double r0 = bce(2.0, 1) + bce(-1.0, 0) + bce(0.5, 1);
  const double r1 = bce(0.0, 0) + bce(1.5, 1) + bce(-3.0, 0);
  LossOptions o;
  o.multi_label = true;
  EXPECT_NEAR(batch_loss(logits, two_records(), o).item<double>(), (r0 + r1) / 2, 1e-5);
  o.sum = true;
  EXPECT_NEAR(batch_loss(logits, two_records(), o).item<double>(), r0 + r1, 1e-5);
  o.class_weights = torch::tensor({3.0f, 1.0f, 2.0f});  // pos_weight: scales the positives
  const double w0 = bce(2.0, 1, 3) + bce(-1.0, 0) + bce(0.5, 1, 2);
  const double w1 = bce(0.0, 0) + bce(1.5, 1, 1) + bce(-3.0, 0);
  EXPECT_NEAR(batch_loss(logits, two_records(), o).item<double>(), w0 + w1, 1e-5);
}

TEST(Loss, SingleLabelIsCrossEntropyOfTheFirstLabel) {
  auto logits = torch::tensor({{2.0f, -1.0f, 0.5f}, {0.0f, 1.5f, -3.0f}});
  RawBatch b = two_records();
  b.label_lists.clear();
  b.label_starts.clear();
  const double expected =
      torch::nn::functional::cross_entropy(logits, torch::tensor({0L, 1L})).item<double>();
  EXPECT_NEAR(batch_loss(logits, b, LossOptions{}).item<double>(), expected, 1e-6);
}

TEST(Loss, BalancedPosWeightIsNegativesOverPositives) {
  auto w = balanced_pos_weight({25, 50, 0}, 100);
  EXPECT_FLOAT_EQ(w[0].item<float>(), 3.0f);
  EXPECT_FLOAT_EQ(w[1].item<float>(), 1.0f);
  EXPECT_FLOAT_EQ(w[2].item<float>(), 0.0f);
}

}  // namespace
}  // namespace sift
