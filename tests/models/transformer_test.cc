#include "models/transformer.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "sequence_batch.h"
#include "tests/test_files.h"

namespace sift {
namespace transformer_test {

using test_util::train_on;

ModelConfig config(const std::string& pooling = "cls", const std::string& positions = "learned") {
  ModelConfig c;
  c.type = "transformer";
  c.dim = 16;
  c.layers = 2;
  c.heads = 4;
  c.ff_dim = 32;
  c.pooling = pooling;
  c.positions = positions;
  c.max_positions = 32;
  c.dropout = 0.1;
  return c;
}

ModelShape shape(int64_t ids = 50, int64_t classes = 3) {
  ModelShape s;
  s.num_ids = ids;
  s.num_classes = classes;
  return s;
}

// Rows of ids, each padded with 0 to the longest.
ModelInput sequences(const std::vector<std::vector<int64_t>>& rows) {
  int64_t longest = 1;
  for (const auto& r : rows) longest = std::max<int64_t>(longest, r.size());
  ModelInput in;
  in.ids = torch::zeros({static_cast<int64_t>(rows.size()), longest}, torch::kInt64);
  std::vector<int64_t> lengths;
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t j = 0; j < rows[i].size(); ++j) in.ids[i][j] = rows[i][j];
    lengths.push_back(std::max<int64_t>(rows[i].size(), 1));
  }
  in.lengths = torch::tensor(lengths, torch::kInt64);
  return in;
}

const std::vector<std::string> kPoolings = {"cls", "mean", "max"};
const std::vector<std::string> kPositions = {"learned", "sinusoidal"};

TEST(Transformer, OutputShapeIsBatchByClasses) {
  for (const auto& pooling : kPoolings) {
    Transformer model(config(pooling), shape(50, 5));
    const auto logits = model->forward(sequences({{1, 2, 3}, {4}, {5, 6, 7, 8, 9}}));
    EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{3, 5})) << pooling;
    EXPECT_EQ(logits.dtype(), torch::kFloat32);
    EXPECT_TRUE(torch::isfinite(logits).all().item<bool>()) << pooling;
  }
}

TEST(Transformer, LayersAreNamedByIndex) {
  Transformer model(config(), shape());
  const auto params = model->named_parameters();
  EXPECT_TRUE(params.contains("layers.0.attention.in_proj.weight"));
  EXPECT_TRUE(params.contains("layers.1.ff_out.bias"));
  EXPECT_FALSE(params.contains("layers.2.ff_out.bias"));
  EXPECT_TRUE(params.contains("embedding.weight"));
  EXPECT_TRUE(params.contains("positions.weight"));
  EXPECT_TRUE(params.contains("cls"));
  const auto modules = model->named_modules();
  EXPECT_TRUE(modules.contains("layers.0"));
  EXPECT_TRUE(modules.contains("layers.1"));
}

TEST(Transformer, GradientsReachEveryParameter) {
  for (const auto& pooling : kPoolings) {
    torch::manual_seed(3);
    Transformer model(config(pooling), shape());
    const auto labels = torch::tensor({0, 1, 2}, torch::kInt64);
    auto loss = torch::nn::functional::cross_entropy(
        model->forward(sequences({{1, 2, 3}, {4}, {5, 6, 7, 8, 9}})), labels);
    loss.backward();
    for (const auto& p : model->named_parameters()) {
      ASSERT_TRUE(p.value().grad().defined()) << pooling << " " << p.key();
      EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0.0) << pooling << " " << p.key();
    }
    // The padding row of the embedding never learns.
    EXPECT_EQ(model->named_parameters()["embedding.weight"].grad()[0].abs().sum().item<double>(),
              0.0);
  }
}

// A text's logits must not depend on the batch it is in: alone, or padded next to a
// longer text.
TEST(Transformer, PaddingNeverChangesTheLogits) {
  for (const auto& pooling : kPoolings) {
    for (const auto& positions : kPositions) {
      torch::manual_seed(7);
      Transformer model(config(pooling, positions), shape());
      model->eval();
      torch::NoGradGuard no_grad;
      const std::vector<int64_t> a = {3, 9, 4}, b = {7, 1, 8, 2, 6, 5, 11, 12};
      const auto alone = model->forward(sequences({a}));
      const auto batched = model->forward(sequences({a, b}));
      const auto reversed = model->forward(sequences({b, a}));
      EXPECT_TRUE(torch::allclose(alone[0], batched[0], 1e-5, 1e-5))
          << pooling << "/" << positions << "\n"
          << alone << "\n"
          << batched;
      EXPECT_TRUE(torch::allclose(alone[0], reversed[1], 1e-5, 1e-5))
          << pooling << "/" << positions;
      EXPECT_TRUE(torch::allclose(model->forward(sequences({b}))[0], batched[1], 1e-5, 1e-5))
          << pooling << "/" << positions;

      // Whatever sits past a text's length (here: real ids, not 0) is ignored.
      auto junk = sequences({a, b});
      junk.ids[0].narrow(0, 3, 5).fill_(13);
      EXPECT_TRUE(torch::allclose(alone[0], model->forward(junk)[0], 1e-5, 1e-5))
          << pooling << "/" << positions;
    }
  }
}

TEST(Transformer, EmptyTextIsOnePaddingToken) {
  Transformer model(config("mean"), shape());
  model->eval();
  const auto logits = model->forward(sequences({{}, {1, 2, 3}}));
  EXPECT_TRUE(torch::isfinite(logits).all().item<bool>());
}

TEST(Transformer, LongerTextsAreCutAtMaxPositions) {
  for (const auto& pooling : kPoolings) {
    for (const auto& positions : kPositions) {
      torch::manual_seed(5);
      ModelConfig c = config(pooling, positions);
      c.max_positions = 4;
      Transformer model(c, shape());
      model->eval();
      EXPECT_EQ(model->max_tokens(), 4);
      torch::NoGradGuard no_grad;
      const auto cut = model->forward(sequences({{1, 2, 3, 4}}));
      const auto longer = model->forward(sequences({{1, 2, 3, 4, 5, 6, 7}, {8, 9}}));
      EXPECT_EQ(longer.sizes(), (std::vector<int64_t>{2, 3}));
      EXPECT_TRUE(torch::allclose(cut[0], longer[0], 1e-5, 1e-5)) << pooling << "/" << positions;
      EXPECT_TRUE(torch::allclose(model->forward(sequences({{8, 9}}))[0], longer[1], 1e-5, 1e-5));
    }
  }
}

TEST(Transformer, SinusoidalPositionsAreAFixedBuffer) {
  Transformer model(config("mean", "sinusoidal"), shape());
  EXPECT_FALSE(model->named_parameters().contains("positions.weight"));
  const auto table = model->named_buffers()["sinusoidal_positions"];
  ASSERT_TRUE(table.defined());
  EXPECT_EQ(table.sizes(), (std::vector<int64_t>{32, 16}));  // no CLS with mean pooling
  EXPECT_NEAR(table[0][0].item<double>(), 0.0, 1e-7);
  EXPECT_NEAR(table[0][1].item<double>(), 1.0, 1e-7);
  EXPECT_NEAR(table[3][0].item<double>(), std::sin(3.0), 1e-6);
  EXPECT_NEAR(table[3][3].item<double>(), std::cos(3.0 / std::pow(10000.0, 2.0 / 16)), 1e-6);
}

// The hand-written attention agrees with torch::nn::MultiheadAttention given the same
// weights, key padding mask included.
TEST(Transformer, AttentionMatchesTorchMultiheadAttention) {
  torch::manual_seed(11);
  const int64_t dim = 8, heads = 2;
  SelfAttention mine(dim, heads, 0.0);
  torch::nn::MultiheadAttention reference(torch::nn::MultiheadAttentionOptions(dim, heads));
  {
    torch::NoGradGuard no_grad;
    mine->in_proj->bias.normal_();  // not zero, so that the bias layout is checked too
    mine->out_proj->bias.normal_();
    reference->in_proj_weight.copy_(mine->in_proj->weight);
    reference->in_proj_bias.copy_(mine->in_proj->bias);
    reference->out_proj->weight.copy_(mine->out_proj->weight);
    reference->out_proj->bias.copy_(mine->out_proj->bias);
  }
  mine->eval();
  reference->eval();
  const auto x = torch::randn({2, 5, dim});
  const auto padding = torch::tensor({0, 0, 0, 1, 1, 0, 0, 0, 0, 0}, torch::kBool).view({2, 5});
  const auto bias =
      torch::zeros({2, 1, 1, 5})
          .masked_fill(padding.view({2, 1, 1, 5}), -std::numeric_limits<float>::infinity());
  const auto ours = mine->forward(x, bias);
  const auto xt = x.transpose(0, 1);  // [length, batch, dim]
  const auto theirs = std::get<0>(reference->forward(xt, xt, xt, padding)).transpose(0, 1);
  EXPECT_TRUE(torch::allclose(ours, theirs, 1e-5, 1e-5)) << ours << "\n" << theirs;
}

TEST(Transformer, TrainingReducesTheLoss) {
  torch::manual_seed(1);
  ModelConfig c = config("mean");
  c.dropout = 0.0;
  Transformer model(c, shape(20, 2));
  torch::optim::AdamW adam(model->parameters(), torch::optim::AdamWOptions(1e-2));
  // The class is whether token 1 comes before token 2: order matters.
  const auto input = sequences({{1, 5, 2}, {2, 5, 1}, {1, 2}, {2, 1, 6, 7}});
  const auto labels = torch::tensor({0, 1, 0, 1}, torch::kInt64);
  const auto [first, last] = train_on(*model, adam, input, labels, 60);
  EXPECT_LT(last, 0.05) << "first " << first;
}

TEST(Transformer, RandomTokensHaveUnitVarianceAfterScalingAndPaddingIsZero) {
  torch::manual_seed(2);
  ModelConfig c = config();
  c.dim = 64;
  Transformer model(c, shape(2000, 2));
  const auto w = model->named_parameters()["embedding.weight"];
  EXPECT_EQ(w[0].abs().sum().item<double>(), 0.0);
  EXPECT_NEAR((w.narrow(0, 1, 1999) * std::sqrt(64.0)).std().item<double>(), 1.0, 0.05);
}

TEST(Transformer, StartsFromPretrainedVectorsAndCanFreezeThem) {
  const std::string dir = testing::make_temp_dir("sift_transformer");
  const std::string path = dir + "/v.vec";
  std::ofstream(path) << "cat 1 2 3 4\ndog -1 -2 -3 -4\n";
  auto vocab = std::make_shared<Vocab>();
  vocab->add("the", 10);  // id 2
  vocab->add("cat", 5);   // id 3
  vocab->add("dog", 1);   // id 4
  ModelShape s = shape(vocab->size(), 2);
  s.vocab = vocab;
  ModelConfig c = config("mean");
  c.dim = 4;
  c.heads = 2;
  c.pretrained = path;
  c.freeze_embeddings = true;
  Transformer model(c, s);
  const auto w = model->named_parameters()["embedding.weight"];
  EXPECT_TRUE(torch::equal(w[3], torch::tensor({1.0f, 2.0f, 3.0f, 4.0f})));
  EXPECT_TRUE(torch::equal(w[4], torch::tensor({-1.0f, -2.0f, -3.0f, -4.0f})));
  EXPECT_FALSE(w.requires_grad());
  model->forward(sequences({{3, 4}, {2}})).sum().backward();
  EXPECT_FALSE(w.grad().defined());
  EXPECT_TRUE(model->named_parameters()["layers.0.ff_in.weight"].grad().defined());
}

TEST(Transformer, HeadsMustDivideDim) {
  ModelConfig c = config();
  c.dim = 100;
  c.heads = 3;
  try {
    Transformer model(c, shape());
    FAIL() << "expected a sift::Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "model.heads: The embedding dimension (model.dim 100) must be divisible by the "
                 "number of heads (3).");
  }
}

TEST(Transformer, AttentionPoolingIsRefused) {
  try {
    Transformer model(config("attention"), shape());
    FAIL() << "expected a sift::Error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("model.pooling: ", 0), 0u) << m;
    EXPECT_NE(m.find("'attention'"), std::string::npos) << m;
    EXPECT_EQ(m.back(), '.') << m;
  }
}

TEST(ModelRegistry, CreatesTransformerByName) {
  const ModelSpec& spec = find_model("transformer");
  EXPECT_EQ(spec.input, InputKind::sequence);
  EXPECT_NE(std::find(spec.traits.options.begin(), spec.traits.options.end(), "model.heads"),
            spec.traits.options.end());
  Classifier model = spec.create(config(), shape(30, 2));
  EXPECT_EQ(model->forward(sequences({{1, 2}, {3}})).sizes(), (std::vector<int64_t>{2, 2}));
  ModelConfig bad = config();
  bad.heads = 5;
  EXPECT_THROW(spec.create(bad, shape()), Error);
}

}  // namespace transformer_test
}  // namespace sift
