#include "framework/train/optimization.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sift {
namespace optimization_test {

TrainConfig schedule(const std::string& type, double lr = 1.0) {
  TrainConfig t;
  t.optimizer.lr = lr;
  t.scheduler.type = from_string<SchedulerType>(type, "train.scheduler.type");
  return t;
}

TEST(Schedule, ConstantKeepsTheLearningRate) {
  const TrainConfig t = schedule("constant", 0.3);
  for (int64_t step : {0, 5, 99}) EXPECT_DOUBLE_EQ(scheduled_lr(t, step, 100), 0.3);
}

TEST(Schedule, LinearDecaysToTheFinalRatio) {
  TrainConfig t = schedule("linear", 2.0);
  t.scheduler.final_lr_ratio = 0.1;
  EXPECT_DOUBLE_EQ(scheduled_lr(t, 0, 100), 2.0);
  EXPECT_NEAR(scheduled_lr(t, 50, 100), 2.0 - 1.8 * 0.5, 1e-12);
  EXPECT_NEAR(scheduled_lr(t, 100, 100), 0.2, 1e-12);
  EXPECT_NEAR(scheduled_lr(t, 150, 100), 0.2, 1e-12);  // past the horizon: stays at the floor
}

TEST(Schedule, WarmupLinearRisesThenFalls) {
  TrainConfig t = schedule("warmup_linear");
  t.scheduler.warmup_steps = 10;
  EXPECT_NEAR(scheduled_lr(t, 0, 110), 0.1, 1e-12);
  EXPECT_NEAR(scheduled_lr(t, 4, 110), 0.5, 1e-12);
  EXPECT_NEAR(scheduled_lr(t, 9, 110), 1.0, 1e-12);
  EXPECT_NEAR(scheduled_lr(t, 10, 110), 1.0, 1e-12);
  EXPECT_NEAR(scheduled_lr(t, 60, 110), 0.5, 1e-12);
  EXPECT_NEAR(scheduled_lr(t, 110, 110), 0.0, 1e-12);
}

TEST(Schedule, WarmupCosineFollowsHalfACosine) {
  TrainConfig t = schedule("warmup_cosine");
  t.scheduler.warmup_ratio = 0.1;  // 10 of 100 steps
  EXPECT_NEAR(scheduled_lr(t, 9, 100), 1.0, 1e-12);
  EXPECT_NEAR(scheduled_lr(t, 10, 100), 1.0, 1e-12);
  EXPECT_NEAR(scheduled_lr(t, 55, 100), 0.5, 1e-12);
  EXPECT_NEAR(scheduled_lr(t, 10 + 90 / 4, 100), 0.5 * (1 + std::cos(M_PI * 22.0 / 90)), 1e-12);
  EXPECT_NEAR(scheduled_lr(t, 100, 100), 0.0, 1e-12);
}

TEST(Optimizer, FrozenParametersAreLeftOut) {
  auto a = torch::ones({2}, torch::requires_grad());
  auto b = torch::ones({2});  // requires no gradient: frozen
  for (const char* type : {"sgd", "adam", "adamw", "adagrad", "rmsprop"}) {
    TrainConfig t;
    t.optimizer.type = from_string<OptimizerType>(type, "train.optimizer.type");
    auto optimizer = create_optimizer(t.optimizer, {a, b});
    ASSERT_EQ(optimizer->param_groups().size(), 1u) << type;
    EXPECT_EQ(optimizer->param_groups()[0].params().size(), 1u) << type;
  }
}

TEST(Optimizer, NesterovSgdStepsDifferFromPlainMomentum) {
  auto run = [](bool nesterov) {
    auto w = torch::ones({1}, torch::requires_grad());
    TrainConfig t;
    t.optimizer.lr = 0.1;
    t.optimizer.momentum = 0.9;
    t.optimizer.nesterov = nesterov;
    auto optimizer = create_optimizer(t.optimizer, {w});
    for (int i = 0; i < 3; ++i) {
      optimizer->zero_grad();
      (w * w).sum().backward();
      optimizer->step();
    }
    return w.item<double>();
  };
  EXPECT_NE(run(true), run(false));
}

}  // namespace optimization_test
}  // namespace sift
