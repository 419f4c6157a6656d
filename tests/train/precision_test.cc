#include "framework/train/precision.h"
#include "models/autocast.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "config/loader.h"
#include "core/error.h"

namespace sift {
namespace precision_test {

TEST(Autocast, Bf16OnCpuInsideTheGuardOnly) {
  auto linear = torch::nn::Linear(8, 4);
  auto x = torch::randn({2, 8});
  {
    AutocastGuard guard(Precision::bf16, torch::kCPU);
    EXPECT_EQ(linear->forward(x).scalar_type(), torch::kBFloat16);
    {
      AutocastGuard inner(Precision::fp32, torch::kCPU);  // fp32 leaves the state alone
      EXPECT_EQ(linear->forward(x).scalar_type(), torch::kBFloat16);
    }
    EXPECT_EQ(linear->weight.scalar_type(), torch::kFloat32);  // weights stay fp32
  }
  EXPECT_FALSE(AutocastState::current().cpu);
  EXPECT_EQ(linear->forward(x).scalar_type(), torch::kFloat32);
}

TEST(Autocast, ReEntersACapturedState) {
  AutocastState captured;
  {
    AutocastGuard guard(Precision::bf16, torch::kCPU);
    captured = AutocastState::current();
  }
  ASSERT_TRUE(captured.cpu);
  {
    AutocastGuard again(captured);
    EXPECT_EQ(torch::mm(torch::randn({2, 2}), torch::randn({2, 2})).scalar_type(),
              torch::kBFloat16);
  }
  EXPECT_FALSE(AutocastState::current().cpu);
}

// A parameter whose gradient is `value` times the scale, as after a scaled backward.
torch::Tensor parameter_with_grad(const LossScaler& scaler, float value) {
  auto p = torch::zeros({3}, torch::requires_grad());
  scaler.scale_loss((p * value).sum()).backward();
  return p;
}

TEST(LossScaler, ScalesAndUnscalesExactly) {
  LossScaler scaler(LossScalerOptions{});
  EXPECT_EQ(scaler.scale(), 65536.0);
  auto p = parameter_with_grad(scaler, 0.25f);
  EXPECT_EQ(p.grad()[0].item<float>(), 0.25f * 65536.0f);
  EXPECT_TRUE(scaler.unscale({p}));
  EXPECT_TRUE(torch::equal(p.grad(), torch::full({3}, 0.25f)));
}

TEST(LossScaler, SkipsOnOverflowHalvesAndGrowsBack) {
  LossScalerOptions options;
  options.init_scale = 1024.0;
  options.growth_interval = 3;
  LossScaler scaler(options);
  // Injected overflow: one gradient is inf, another nan.
  for (float bad : {std::numeric_limits<float>::infinity(), std::nanf("")}) {
    auto good = parameter_with_grad(scaler, 1.0f);
    auto p = parameter_with_grad(scaler, 1.0f);
    p.mutable_grad()[1] = bad;
    const bool finite = scaler.unscale({good, p});
    EXPECT_FALSE(finite);
    scaler.update(finite);
  }
  EXPECT_EQ(scaler.scale(), 256.0);
  EXPECT_EQ(scaler.skipped_steps(), 2);
  // Clean steps: the scale holds for growth_interval - 1 steps, then doubles.
  for (int step = 1; step <= 6; ++step) {
    auto p = parameter_with_grad(scaler, 0.5f);
    const bool finite = scaler.unscale({p});
    ASSERT_TRUE(finite);
    EXPECT_TRUE(torch::equal(p.grad(), torch::full({3}, 0.5f)));
    scaler.update(finite);
    EXPECT_EQ(scaler.scale(), step < 3 ? 256.0 : step < 6 ? 512.0 : 1024.0) << "step " << step;
  }
  EXPECT_EQ(scaler.skipped_steps(), 2);
}

TEST(LossScaler, SparseGradientsAndStateRoundTrip) {
  LossScalerOptions options;
  options.growth_interval = 5;
  LossScaler scaler(options);
  auto embedding = torch::nn::Embedding(torch::nn::EmbeddingOptions(10, 4).sparse(true));
  scaler.scale_loss(embedding->forward(torch::tensor({1, 3})).sum()).backward();
  EXPECT_TRUE(scaler.unscale(embedding->parameters()));
  EXPECT_TRUE(torch::equal(embedding->weight.grad().to_dense().sum(0), torch::full({4}, 2.0f)));
  scaler.update(true);
  scaler.update(false);
  scaler.update(true);
  LossScaler restored(options);
  restored.load_state(scaler.state());
  EXPECT_EQ(restored.scale(), scaler.scale());
  EXPECT_EQ(restored.skipped_steps(), 1);
  EXPECT_EQ(restored.state(), scaler.state());
}

TEST(LossScaler, DisabledChangesNothing) {
  LossScaler off;
  auto p = parameter_with_grad(off, std::numeric_limits<float>::infinity());
  EXPECT_TRUE(off.unscale({p}));
  EXPECT_FALSE(off.enabled());
  EXPECT_TRUE(loss_scaling_enabled(LossScaling::automatic, Precision::fp16));
  EXPECT_FALSE(loss_scaling_enabled(LossScaling::automatic, Precision::bf16));
  EXPECT_TRUE(loss_scaling_enabled(LossScaling::dynamic, Precision::fp32));
  EXPECT_FALSE(loss_scaling_enabled(LossScaling::off, Precision::fp16));
}

// The checks between these options are in tests/config/validate_test.cc.
TEST(PrecisionOptions, BadValuesNameTheKey) {
  for (const std::string o :
       {"train.precision=fp8", "train.gradient_checkpointing=some",
        "train.gradient_checkpointing_every=0", "train.loss_scaling=static",
        "train.loss_scale_growth_interval=0"}) {
    try {
      load_config("", {o});
      ADD_FAILURE() << o << " was accepted";
    } catch (const Error& e) {
      const std::string key = o.substr(0, o.find('='));
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

}  // namespace precision_test
}  // namespace sift
