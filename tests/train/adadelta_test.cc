#include "framework/train/adadelta.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <vector>

#include "framework/runtime/checkpoint.h"
#include "core/error.h"
#include "framework/train/max_norm.h"

namespace sift {
namespace adadelta_test {

// Adadelta written out in doubles (Zeiler 2012, as torch.optim.Adadelta) on the loss
// sum(c * p^2), whose gradient is 2 c p.
std::vector<double> reference(std::vector<double> p, const std::vector<double>& c, int steps,
                              double lr, double rho, double eps, double decay) {
  std::vector<double> sq(p.size(), 0.0), acc(p.size(), 0.0);
  for (int s = 0; s < steps; ++s) {
    for (size_t i = 0; i < p.size(); ++i) {
      const double g = 2 * c[i] * p[i] + decay * p[i];
      sq[i] = rho * sq[i] + (1 - rho) * g * g;
      const double delta = std::sqrt(acc[i] + eps) / std::sqrt(sq[i] + eps) * g;
      acc[i] = rho * acc[i] + (1 - rho) * delta * delta;
      p[i] -= lr * delta;
    }
  }
  return p;
}

void step(Adadelta& optimizer, torch::Tensor& p, const torch::Tensor& c) {
  optimizer.zero_grad();
  (c * p * p).sum().backward();
  optimizer.step();
}

TEST(Adadelta, MatchesTheUpdateRule) {
  const std::vector<double> start = {1.5, -0.7, 0.2}, c = {1.0, 3.0, 0.5};
  auto p = torch::tensor(start, torch::kFloat64).requires_grad_(true);
  const auto ct = torch::tensor(c, torch::kFloat64);
  Adadelta optimizer({p}, AdadeltaOptions(1.0).rho(0.95).eps(1e-6).weight_decay(0.01));
  for (int s = 0; s < 5; ++s) step(optimizer, p, ct);
  const auto want = reference(start, c, 5, 1.0, 0.95, 1e-6, 0.01);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(p[static_cast<int64_t>(i)].item<double>(), want[i], 1e-12) << i;
  }
  EXPECT_NE(p[0].item<double>(), start[0]);
}

TEST(Adadelta, SavedStateContinuesExactly) {
  const auto c = torch::tensor({1.0, 3.0, 0.5}, torch::kFloat64);
  auto a = torch::tensor({1.5, -0.7, 0.2}, torch::kFloat64).requires_grad_(true);
  Adadelta straight({a}, AdadeltaOptions(1.0).rho(0.9));
  for (int s = 0; s < 4; ++s) step(straight, a, c);

  auto b = torch::tensor({1.5, -0.7, 0.2}, torch::kFloat64).requires_grad_(true);
  Adadelta first({b}, AdadeltaOptions(1.0).rho(0.9));
  for (int s = 0; s < 2; ++s) step(first, b, c);
  const std::string bytes = optimizer_bytes(first);
  Adadelta second({b}, AdadeltaOptions(1.0).rho(0.9));  // as the trainer: options from the config
  load_optimizer_bytes(second, bytes, "test");
  for (int s = 0; s < 2; ++s) step(second, b, c);
  EXPECT_TRUE(torch::equal(a, b)) << a << b;
}

TEST(MaxNorm, BoundsEachOutputRow) {
  torch::nn::Sequential model;
  auto output = model->register_module("output", torch::nn::Linear(2, 3));
  {
    torch::NoGradGuard no_grad;
    output->weight.copy_(torch::tensor({{3.0f, 4.0f}, {0.3f, 0.4f}, {-6.0f, 8.0f}}));
  }
  apply_max_norm(*model, 3.0);
  const auto norms = output->weight.norm(2, 1);
  EXPECT_NEAR(norms[0].item<float>(), 3.0f, 1e-5);  // was 5
  EXPECT_NEAR(norms[1].item<float>(), 0.5f, 1e-6);  // below the bound: untouched
  EXPECT_NEAR(norms[2].item<float>(), 3.0f, 1e-5);  // was 10
  EXPECT_NEAR(output->weight[2][0].item<float>() / output->weight[2][1].item<float>(), -0.75f, 1e-5);
  torch::nn::Sequential no_output;
  no_output->push_back(torch::nn::Linear(2, 3));
  EXPECT_THROW(apply_max_norm(*no_output, 3.0), Error);
}

}  // namespace adadelta_test
}  // namespace sift
