#include "models/textcnn.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "tests/models/sequence_batch.h"

namespace sift {
namespace textcnn_test {

using test_util::Ids;

ModelConfig config(std::vector<int64_t> widths = {2, 3, 4}) {
  ModelConfig c;
  c.type = "textcnn";
  c.dim = 8;
  c.widths = std::move(widths);
  c.filters = 5;
  c.dropout = 0.5;
  return c;
}

using test_util::batch;
using test_util::max_diff;
using test_util::shape;
using test_util::train_on;

TEST(TextCnn, OutputShapeIsBatchByClasses) {
  TextCnn model(config(), shape(30, 4));
  const auto logits = model->forward(batch({{1, 2, 3, 4, 5}, {6, 7}, {8, 9, 10}}));
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(logits.dtype(), torch::kFloat32);
}

TEST(TextCnn, GradientsReachEveryParameter) {
  torch::manual_seed(3);
  TextCnn model(config(), shape());
  model->train();
  const auto labels = torch::tensor({0, 1, 2}, torch::kInt64);
  auto loss = torch::nn::functional::cross_entropy(
      model->forward(batch({{1, 2, 3, 4, 5, 6}, {7, 8}, {9, 10, 11, 12}})), labels);
  loss.backward();
  for (const auto& p : model->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0.0) << p.key();
  }
  // The padding row is never updated.
  EXPECT_EQ(model->named_parameters()["embedding.weight"].grad()[0].abs().sum().item<double>(),
            0.0);
}

// The logits of a sequence alone equal its logits next to a longer one, with padding
// of any content and any extra length.
void expect_padding_invariance(TextCnnImpl& model, const Ids& seq) {
  model.eval();
  torch::NoGradGuard no_grad;
  const Ids longer = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};
  const auto alone = model.forward(batch({seq}));
  const auto first = model.forward(batch({seq, longer}))[0];
  const auto second = model.forward(batch({longer, seq}))[1];
  const auto junk = model.forward(batch({seq, longer}, 20, /*pad=*/7))[0];
  EXPECT_LT(max_diff(alone[0], first), 1e-6);
  EXPECT_LT(max_diff(alone[0], second), 1e-6);
  EXPECT_LT(max_diff(alone[0], junk), 1e-6);
}

TEST(TextCnn, PaddingNeverChangesTheOutput) {
  torch::manual_seed(4);
  TextCnn model(config(), shape());
  // A padding row that is not zero must still not matter.
  torch::NoGradGuard no_grad;
  model->named_parameters()["embedding.weight"][0].fill_(1.0);
  expect_padding_invariance(*model, {5, 6, 7, 8, 9, 10});
  expect_padding_invariance(*model, {5, 6, 7, 8});  // exactly the widest filter
}

TEST(TextCnn, SequencesShorterThanTheWidestFilterWork) {
  torch::manual_seed(5);
  TextCnn model(config({3, 4, 5}), shape());
  model->named_parameters()["embedding.weight"].detach()[0].fill_(1.0);
  for (const Ids& seq : {Ids{4}, Ids{4, 9}, Ids{4, 9, 2, 7}}) {
    expect_padding_invariance(*model, seq);
    model->eval();
    EXPECT_TRUE(torch::isfinite(model->forward(batch({seq}))).all().item<bool>());
  }
  // Different short texts still give different outputs.
  model->eval();
  EXPECT_GT(max_diff(model->forward(batch({{4}})), model->forward(batch({{9}}))), 1e-4);
}

TEST(TextCnn, EvalIsDeterministicAndTrainUsesDropout) {
  torch::manual_seed(6);
  TextCnn model(config(), shape());
  const auto in = batch({{1, 2, 3, 4, 5}, {6, 7, 8}});
  model->eval();
  EXPECT_EQ(max_diff(model->forward(in), model->forward(in)), 0.0);
  model->train();
  EXPECT_GT(max_diff(model->forward(in), model->forward(in)), 0.0);
}

TEST(TextCnn, TrainingReducesTheLoss) {
  torch::manual_seed(7);
  ModelConfig c = config();
  c.dropout = 0.0;  // a noise-free loss curve
  TextCnn model(c, shape());
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-2));
  const auto in = batch({{1, 2, 3, 4, 5}, {6, 7, 8}, {9, 10}});
  const auto labels = torch::tensor({0, 1, 2}, torch::kInt64);
  const auto [first, last] = train_on(*model, adam, in, labels, 40);
  EXPECT_LT(last, first / 4);
}

TEST(TextCnn, FrozenEmbeddingsGetNoGradient) {
  ModelConfig c = config();
  c.freeze_embeddings = true;
  TextCnn model(c, shape());
  model->forward(batch({{1, 2, 3}})).sum().backward();
  const auto params = model->named_parameters();
  EXPECT_FALSE(params["embedding.weight"].requires_grad());
  EXPECT_FALSE(params["embedding.weight"].grad().defined());
  EXPECT_TRUE(params["output.weight"].grad().defined());
}

TEST(ModelRegistry, CreatesTextCnnByName) {
  const ModelSpec& spec = find_model("textcnn");
  EXPECT_EQ(spec.input, InputKind::sequence);
  Classifier model = spec.create(config(), shape(30, 2));
  EXPECT_EQ(model->forward(batch({{1, 2}, {3, 4, 5}})).sizes(), (std::vector<int64_t>{2, 2}));
}

}  // namespace textcnn_test
}  // namespace sift
