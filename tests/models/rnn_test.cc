#include "models/rnn.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "tests/models/sequence_batch.h"

namespace sift {
namespace rnn_test {

using test_util::Ids;

ModelConfig config(const std::string& cell, bool bidirectional, const std::string& pooling,
                   int64_t layers = 1) {
  ModelConfig c;
  c.type = "rnn";
  c.dim = 8;
  c.cell = cell;
  c.hidden = 6;
  c.layers = layers;
  c.bidirectional = bidirectional;
  c.pooling = pooling;
  c.dropout = 0.3;
  return c;
}

using test_util::batch;
using test_util::max_diff;
using test_util::shape;
using test_util::train_on;

// cell, bidirectional, pooling, layers
using Variant = std::tuple<std::string, bool, std::string, int64_t>;

class RnnVariant : public ::testing::TestWithParam<Variant> {
 protected:
  ModelConfig variant_config() const {
    const auto& [cell, bidirectional, pooling, layers] = GetParam();
    return config(cell, bidirectional, pooling, layers);
  }
};

TEST_P(RnnVariant, OutputShapeIsBatchByClasses) {
  Rnn model(variant_config(), shape(30, 4));
  const auto logits = model->forward(batch({{1, 2, 3, 4, 5}, {6}, {8, 9, 10}}));
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{3, 4}));
}

TEST_P(RnnVariant, PaddingNeverChangesTheOutput) {
  torch::manual_seed(11);
  Rnn model(variant_config(), shape());
  model->eval();
  torch::NoGradGuard no_grad;
  const Ids longer = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};
  for (const Ids& seq : {Ids{7}, Ids{5, 6, 7, 8, 9}}) {
    const auto alone = model->forward(batch({seq}))[0];
    const auto first = model->forward(batch({seq, longer}))[0];
    const auto second = model->forward(batch({longer, seq, {2, 2}}))[1];
    // Extra length and padding of another id: the content past a length is never read.
    const auto junk = model->forward(batch({seq, longer}, 20, /*pad=*/7))[0];
    EXPECT_LT(max_diff(alone, first), 1e-6);
    EXPECT_LT(max_diff(alone, second), 1e-6);
    EXPECT_LT(max_diff(alone, junk), 1e-6);
  }
}

TEST_P(RnnVariant, GradientsReachEveryParameter) {
  torch::manual_seed(12);
  Rnn model(variant_config(), shape());
  model->train();
  const auto labels = torch::tensor({0, 1, 2}, torch::kInt64);
  auto loss = torch::nn::functional::cross_entropy(
      model->forward(batch({{1, 2, 3, 4, 5, 6}, {7, 8}, {9, 10, 11, 12}})), labels);
  loss.backward();
  for (const auto& p : model->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0.0) << p.key();
  }
}

std::string variant_name(const ::testing::TestParamInfo<Variant>& param_info) {
  const auto& [cell, bidirectional, pooling, layers] = param_info.param;
  return cell + (bidirectional ? "_bi_" : "_uni_") + pooling + "_" + std::to_string(layers) +
         "layer";
}

INSTANTIATE_TEST_SUITE_P(CellsDirectionsPoolings, RnnVariant,
                         ::testing::Combine(::testing::Values("lstm", "gru"), ::testing::Bool(),
                                            ::testing::Values("max", "mean", "attention"),
                                            ::testing::Values<int64_t>(1, 2)),
                         variant_name);

TEST(Rnn, TrainingReducesTheLoss) {
  torch::manual_seed(13);
  Rnn model(config("lstm", true, "attention"), shape());
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-2));
  const auto in = batch({{1, 2, 3, 4, 5}, {6, 7, 8}, {9, 10}});
  const auto labels = torch::tensor({0, 1, 2}, torch::kInt64);
  const auto [first, last] = train_on(*model, adam, in, labels, 60);
  EXPECT_LT(last, first / 4);
}

TEST(Rnn, ClsPoolingIsRefused) {
  try {
    Rnn(config("lstm", true, "cls"), shape());
    FAIL() << "expected a sift::Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "model.pooling: The rnn model pools by max, mean or attention.");
  }
  EXPECT_THROW(find_model("rnn").create(config("gru", false, "cls"), shape()), Error);
}

TEST(Rnn, FrozenEmbeddingsGetNoGradient) {
  ModelConfig c = config("gru", true, "mean");
  c.freeze_embeddings = true;
  Rnn model(c, shape());
  model->forward(batch({{1, 2, 3}})).sum().backward();
  const auto params = model->named_parameters();
  EXPECT_FALSE(params["embedding.weight"].grad().defined());
  EXPECT_TRUE(params["output.weight"].grad().defined());
}

TEST(ModelRegistry, CreatesRnnByName) {
  const ModelSpec& spec = find_model("rnn");
  EXPECT_EQ(spec.input, InputKind::sequence);
  Classifier model = spec.create(config("lstm", true, "max"), shape(30, 2));
  EXPECT_EQ(model->forward(batch({{1, 2}, {3, 4, 5}})).sizes(), (std::vector<int64_t>{2, 2}));
}

}  // namespace rnn_test
}  // namespace sift
