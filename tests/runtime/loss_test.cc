#include "framework/runtime/loss.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace sift {
namespace loss_test {

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
  const auto pos_weight = torch::tensor({3.0f, 1.0f, 2.0f});  // scales the positives
  const double w0 = bce(2.0, 1, 3) + bce(-1.0, 0) + bce(0.5, 1, 2);
  const double w1 = bce(0.0, 0) + bce(1.5, 1, 1) + bce(-3.0, 0);
  EXPECT_NEAR(batch_loss(logits, two_records(), o, pos_weight).item<double>(), w0 + w1, 1e-5);
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

// Distillation's unlabelled rows (label -1, appended after the labelled ones) add nothing
// to the hard loss: its mean is over the labelled rows (hand-computed), and their logits
// get no gradient from it.
TEST(Loss, UnlabelledRowsAreLeftOutOfTheHardLoss) {
  // Row 0: logits (0, ln 3), label 1: -ln(3/4). Row 1: (0, 0), label 0: ln 2.
  auto logits =
      torch::tensor({{0.0f, std::log(3.0f)}, {0.0f, 0.0f}, {50.0f, -50.0f}, {-50.0f, 50.0f}})
          .requires_grad_();
  RawBatch b;
  b.add({1}, 1);
  b.add({2}, 0);
  RawBatch unlabelled;
  unlabelled.add({3}, -1);
  unlabelled.add({4}, -1);
  b.append(unlabelled);
  const double row0 = -std::log(0.75), row1 = std::log(2.0);
  auto mean = batch_loss(logits, b, LossOptions{});
  EXPECT_NEAR(mean.item<double>(), (row0 + row1) / 2, 1e-6);
  mean.backward();
  EXPECT_EQ(logits.grad().narrow(0, 2, 2).abs().sum().item<double>(), 0.0);
  LossOptions sum;
  sum.sum = true;
  EXPECT_NEAR(batch_loss(logits, b, sum).item<double>(), row0 + row1, 1e-6);
  // A batch of unlabelled rows only: a hard loss of 0 (not NaN), still differentiable.
  auto none = batch_loss(logits, unlabelled, LossOptions{});
  EXPECT_EQ(none.item<double>(), 0.0);
  EXPECT_TRUE(none.requires_grad());
}

TEST(Loss, MultiLabelUnlabelledRowsAreLeftOutToo) {
  auto logits = torch::tensor({{2.0f, -1.0f, 0.5f}, {0.0f, 1.5f, -3.0f}, {9.0f, 9.0f, 9.0f}});
  RawBatch b = two_records();
  RawBatch unlabelled;
  unlabelled.add({7}, -1);
  b.append(unlabelled);
  const double r0 = bce(2.0, 1) + bce(-1.0, 0) + bce(0.5, 1);
  const double r1 = bce(0.0, 0) + bce(1.5, 1) + bce(-3.0, 0);
  LossOptions o;
  o.multi_label = true;
  EXPECT_NEAR(batch_loss(logits, b, o).item<double>(), (r0 + r1) / 2, 1e-5);
}

TEST(Loss, BalancedPosWeightIsNegativesOverPositives) {
  auto w = balanced_pos_weight({25, 50, 0}, 100);
  EXPECT_FLOAT_EQ(w[0].item<float>(), 3.0f);
  EXPECT_FLOAT_EQ(w[1].item<float>(), 1.0f);
  EXPECT_FLOAT_EQ(w[2].item<float>(), 0.0f);
}

}  // namespace loss_test
}  // namespace sift
