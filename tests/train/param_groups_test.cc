// The optimizer's parameter groups for fine-tuning an encoder: adamw's weight decay spares
// biases and LayerNorm weights, train.optimizer.layer_decay scales each layer's learning
// rate, and a config asking for neither keeps one group.
#include "framework/train/param_groups.h"

#include <gtest/gtest.h>

#include <map>

#include "core/error.h"
#include "framework/train/optimization.h"
#include "models/bert.h"
#include "models/fasttext.h"

namespace sift {
namespace param_groups_test {

Bert small_bert() {
  ModelConfig c;
  c.type = "bert";
  c.dim = 8;
  c.layers = 2;
  c.heads = 2;
  c.ff_dim = 16;
  c.max_positions = 16;
  c.pooling = "cls";
  ModelShape shape;
  shape.num_ids = 30;
  shape.num_classes = 3;
  return Bert(c, shape);
}

// Each parameter's (lr scale, decayed) by name, through the groups' tensors.
std::map<std::string, std::pair<double, bool>> by_name(const ClassifierImpl& model,
                                                       const std::vector<ParamGroup>& groups) {
  std::map<std::string, std::pair<double, bool>> out;
  for (const auto& p : model.named_parameters()) {
    for (const auto& g : groups) {
      for (const auto& t : g.params) {
        if (t.is_same(p.value())) out[p.key()] = {g.lr_scale, g.decay};
      }
    }
  }
  return out;
}

TEST(ParamGroups, AdamwDecaysWeightsButNotBiasesOrLayerNorms) {
  Bert model = small_bert();
  OptimizerConfig o;
  o.type = OptimizerType::adamw;
  o.weight_decay = 0.01;
  const auto groups = param_groups(*model, o);
  ASSERT_EQ(groups.size(), 2u);
  const auto p = by_name(*model, groups);
  EXPECT_EQ(p.size(), model->named_parameters().size());
  EXPECT_TRUE(p.at("embedding.weight").second);
  EXPECT_TRUE(p.at("layers.0.ff_in.weight").second);
  EXPECT_TRUE(p.at("output.weight").second);
  EXPECT_FALSE(p.at("layers.0.ff_in.bias").second);
  EXPECT_FALSE(p.at("layers.1.attention_norm.weight").second);
  EXPECT_FALSE(p.at("embedding_norm.weight").second);
  EXPECT_FALSE(p.at("embedding_norm.bias").second);

  // In the optimizer: the undecayed group has weight_decay 0, the other the config's.
  const auto optimizer = create_optimizer(o, groups);
  const auto& torch_groups = optimizer->param_groups();
  ASSERT_EQ(torch_groups.size(), 2u);
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& options = static_cast<const torch::optim::AdamWOptions&>(torch_groups[i].options());
    EXPECT_EQ(options.weight_decay(), groups[i].decay ? 0.01 : 0.0);
  }
}

TEST(ParamGroups, LayerDecayGivesEachDepthItsShareOfTheLearningRate) {
  Bert model = small_bert();
  OptimizerConfig o;
  o.type = OptimizerType::adamw;
  o.lr = 1e-3;
  o.layer_decay = 0.5;
  const auto groups = param_groups(*model, o);
  const auto p = by_name(*model, groups);
  // Two layers: the head at 1, layer 1 at 0.5, layer 0 at 0.25, the embeddings at 0.125.
  EXPECT_DOUBLE_EQ(p.at("output.weight").first, 1.0);
  EXPECT_DOUBLE_EQ(p.at("head.bias").first, 1.0);
  EXPECT_DOUBLE_EQ(p.at("layers.1.ff_out.weight").first, 0.5);
  EXPECT_DOUBLE_EQ(p.at("layers.0.attention.in_proj.weight").first, 0.25);
  EXPECT_DOUBLE_EQ(p.at("embedding.weight").first, 0.125);
  EXPECT_DOUBLE_EQ(p.at("positions.weight").first, 0.125);
  EXPECT_DOUBLE_EQ(p.at("embedding_norm.weight").first, 0.125);

  // set_lr puts the scheduled rate times each group's share into the optimizer.
  const auto optimizer = create_optimizer(o, groups);
  set_lr(*optimizer, 2e-3, lr_scales(groups));
  for (size_t i = 0; i < groups.size(); ++i) {
    EXPECT_DOUBLE_EQ(optimizer->param_groups()[i].options().get_lr(), 2e-3 * groups[i].lr_scale);
  }
}

TEST(ParamGroups, FrozenParametersAreLeftOutAndNeitherOptionKeepsOneGroup) {
  Bert model = small_bert();
  model->named_parameters()["embedding.weight"].set_requires_grad(false);
  OptimizerConfig o;
  o.type = OptimizerType::adamw;  // weight_decay 0: nothing to spare
  const auto groups = param_groups(*model, o);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].params.size(), model->parameters().size() - 1);
  EXPECT_EQ(groups[0].lr_scale, 1.0);
}

TEST(ParamGroups, LayerDecayOnAModelWithoutLayersIsRefusedNamingTheKey) {
  ModelConfig c;
  c.type = "fasttext";
  c.dim = 4;
  ModelShape shape;
  shape.num_ids = 10;
  shape.num_classes = 2;
  FastText model(c, shape);
  OptimizerConfig o;
  o.layer_decay = 0.9;
  try {
    param_groups(*model, o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("train.optimizer.layer_decay: 0.9"), std::string::npos)
        << e.what();
  }
}

}  // namespace param_groups_test
}  // namespace sift
