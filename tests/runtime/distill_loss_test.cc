// Distillation's loss (framework/runtime/loss.h) against values computed by hand.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "framework/runtime/loss.h"

namespace sift {
namespace distill_loss_test {

std::vector<double> softmax(const std::vector<double>& z, double t) {
  double total = 0.0;
  std::vector<double> p;
  for (double v : z) total += std::exp(v / t);
  for (double v : z) p.push_back(std::exp(v / t) / total);
  return p;
}

// KL(softmax(teacher/T) || softmax(student/T)), written out.
double kl(const std::vector<double>& teacher, const std::vector<double>& student, double t) {
  const auto p = softmax(teacher, t), q = softmax(student, t);
  double d = 0.0;
  for (size_t k = 0; k < p.size(); ++k) d += p[k] * std::log(p[k] / q[k]);
  return d;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST(DistillLoss, OneExampleIsTheKlDivergenceFromTheTeacher) {
  // softmax(0, 1) = (0.2689, 0.7311) against softmax(1, 0): KL = 0.7311 - 0.2689 = 0.4621.
  auto student = torch::tensor({{1.0f, 0.0f}});
  auto teacher = torch::tensor({{0.0f, 1.0f}});
  const double d = distill_loss(student, teacher, 1.0, false, false).item<double>();
  EXPECT_NEAR(d, std::tanh(0.5), 1e-6);  // 0.7311 - 0.2689 is tanh(1/2)
  EXPECT_NEAR(d, kl({0, 1}, {1, 0}, 1.0), 1e-6);
}

TEST(DistillLoss, TheTemperatureSoftensBothSidesAndScalesByItsSquare) {
  auto student = torch::tensor({{2.0f, -1.0f, 0.5f}});
  auto teacher = torch::tensor({{0.3f, 1.7f, -2.0f}});
  for (double t : {1.0, 2.0, 4.0}) {
    const double d = distill_loss(student, teacher, t, false, false).item<double>();
    EXPECT_NEAR(d, t * t * kl({0.3, 1.7, -2.0}, {2.0, -1.0, 0.5}, t), 1e-5) << "T = " << t;
  }
}

TEST(DistillLoss, AStudentMatchingItsTeacherHasNoSoftLoss) {
  auto logits = torch::tensor({{2.0f, -1.0f, 0.5f}, {0.0f, 4.0f, 1.0f}});
  EXPECT_NEAR(distill_loss(logits, logits, 3.0, false, false).item<double>(), 0.0, 1e-6);
  EXPECT_NEAR(distill_loss(logits, logits, 3.0, true, false).item<double>(), 0.0, 1e-5);
}

TEST(DistillLoss, ExamplesAreAveragedOrSummedLikeTheHardLoss) {
  auto student = torch::tensor({{1.0f, 0.0f}, {0.0f, 0.0f}});
  auto teacher = torch::tensor({{0.0f, 1.0f}, {2.0f, 0.0f}});
  const double a = kl({0, 1}, {1, 0}, 2.0) * 4, b = kl({2, 0}, {0, 0}, 2.0) * 4;
  EXPECT_NEAR(distill_loss(student, teacher, 2.0, false, false).item<double>(), (a + b) / 2, 1e-5);
  EXPECT_NEAR(distill_loss(student, teacher, 2.0, false, true).item<double>(), a + b, 1e-5);
}

TEST(DistillLoss, MultiLabelIsTheBernoulliKlDivergenceSummedOverLabels) {
  auto student = torch::tensor({{1.0f, -2.0f}});
  auto teacher = torch::tensor({{-0.5f, 3.0f}});
  const double t = 2.0;
  double expected = 0.0;
  for (auto [s, z] : {std::pair{1.0, -0.5}, std::pair{-2.0, 3.0}}) {
    const double p = sigmoid(z / t), q = sigmoid(s / t);
    expected += p * std::log(p / q) + (1 - p) * std::log((1 - p) / (1 - q));
  }
  EXPECT_NEAR(distill_loss(student, teacher, t, true, false).item<double>(), t * t * expected,
              1e-5);
}

TEST(DistillLoss, AlphaWeighsTheHardLossAndOneLeavesPlainCrossEntropy) {
  auto student = torch::tensor({{2.0f, -1.0f, 0.5f}, {0.0f, 1.5f, -3.0f}}, torch::requires_grad());
  auto teacher = torch::tensor({{0.3f, 1.7f, -2.0f}, {1.0f, 0.0f, 0.0f}});
  RawBatch batch;
  batch.ids = {1, 2};
  batch.offsets = {0, 1};
  batch.labels = {0, 1};
  const torch::Tensor hard = batch_loss(student, batch, LossOptions{});
  const auto plain = distilled_loss(hard, student, teacher, 1.0, 2.0, false, false);
  EXPECT_NEAR(plain.total.item<double>(), hard.item<double>(), 1e-7);
  // and the teacher moves no gradient then
  const auto grad = torch::autograd::grad({plain.total}, {student}, {}, /*retain_graph=*/true)[0];
  const auto ce_grad = torch::autograd::grad({hard}, {student})[0];
  EXPECT_TRUE(torch::allclose(grad, ce_grad));
  const auto mixed = distilled_loss(hard, student, teacher, 0.25, 2.0, false, false);
  EXPECT_NEAR(mixed.total.item<double>(),
              0.25 * hard.item<double>() + 0.75 * mixed.soft.item<double>(), 1e-6);
  const double soft_by_hand =
      4.0 *
      (kl({0.3, 1.7, -2.0}, {2.0, -1.0, 0.5}, 2.0) + kl({1.0, 0.0, 0.0}, {0.0, 1.5, -3.0}, 2.0)) /
      2;
  EXPECT_NEAR(mixed.soft.item<double>(), soft_by_hand, 1e-5);
}

}  // namespace distill_loss_test
}  // namespace sift
