#include <gtest/gtest.h>

#include "models/fasttext.h"
#include "models/fasttext_tables.h"
#include "tests/models/bag_batch.h"

namespace sift {
namespace fasttext_sgd_test {

RawBatch batch() { return test_util::four_bags({0, 2, 1, 3}); }
using test_util::input_of;

// A fastText model whose output layer is not zero, so every parameter gets a gradient.
FastText model() {
  torch::manual_seed(3);
  ModelConfig c;
  c.dim = 8;
  FastText m(c, test_util::bag_shape(20, 4));
  torch::NoGradGuard no_grad;
  for (auto& p : m->named_parameters()) {
    if (p.key().rfind("output.", 0) == 0) p.value().normal_(0.0, 0.5);
  }
  return m;
}

std::vector<torch::Tensor> copies(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> out;
  for (const auto& t : tensors) out.push_back(t.detach().clone());
  return out;
}

TEST(FastTextSgd, OneStepAtLrOneMovesEachWeightByAutogradsGradient) {
  for (const bool sum : {true, false}) {
    FastText m = model();
    const RawBatch b = batch();
    const auto labels = torch::tensor(b.labels, torch::kInt64);
    torch::nn::functional::CrossEntropyFuncOptions options;
    if (sum) {
      options.reduction(torch::kSum);
    } else {
      options.reduction(torch::kMean);
    }
    torch::Tensor loss =
        torch::nn::functional::cross_entropy(m->forward(input_of(b)), labels, options);
    loss.backward();
    const auto before = copies(m->parameters());

    auto fused = bag_sgd(bag_tables_of(*m));
    const double fused_loss = fused->gradient(b, sum ? 1.0 : 0.25);
    fused->apply(b, 1.0);

    const double autograd_sum = loss.item<double>() * (sum ? 1.0 : 4.0);
    EXPECT_NEAR(fused_loss, autograd_sum, 1e-5);
    const auto params = m->parameters();
    for (size_t i = 0; i < params.size(); ++i) {
      const auto moved = before[i] - params[i].detach();
      EXPECT_TRUE(torch::allclose(moved, params[i].grad(), 0.0, 1e-6))
          << "parameter " << i << (sum ? " (sum)" : " (mean)") << ": max difference "
          << (moved - params[i].grad()).abs().max().item<double>();
    }
  }
}

TEST(FastTextSgd, GradientAloneLeavesTheWeightsAsTheyWere) {
  FastText m = model();
  const auto before = copies(m->parameters());
  bag_sgd(bag_tables_of(*m))->gradient(batch(), 1.0);
  const auto after = m->parameters();
  for (size_t i = 0; i < after.size(); ++i) EXPECT_TRUE(torch::equal(before[i], after[i]));
}

}  // namespace fasttext_sgd_test
}  // namespace sift
