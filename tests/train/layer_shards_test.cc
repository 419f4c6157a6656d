// run.shard: parameters (layer_shards.h) in a group of one: the layers' memory is freed
// between uses, gathered for the forward and for backward's re-run, their gradients go to
// the slices only, and two Adam steps give the weights of the same model trained whole
// with the same recomputation.
#include "framework/train/layer_shards.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "framework/runtime/checkpoint.h"
#include "framework/train/optimization.h"
#include "models/transformer.h"
#include "tests/models/sequence_batch.h"
#include "tests/test_files.h"

namespace sift {
namespace layer_shards_test {

Classifier make() {
  ModelConfig c;
  c.type = "transformer";
  c.dim = 16;
  c.dropout = 0.3;  // active: the re-runs must draw the forward's masks
  c.layers = 2;
  c.heads = 4;
  c.ff_dim = 32;
  c.pooling = "cls";
  torch::manual_seed(7);
  auto model = Classifier(Transformer(c, test_util::shape(40, 4)).ptr());
  model->set_recompute({1});
  model->train();
  return model;
}

torch::Tensor loss_of(Classifier& model, uint64_t seed) {
  torch::manual_seed(seed);
  const auto input = test_util::batch({{3, 5, 7, 9, 11, 2}, {4, 6}, {8, 1, 12, 30, 17}, {13}});
  return torch::nn::functional::cross_entropy(model->forward(input), torch::tensor({0, 1, 2, 3}));
}

std::vector<int64_t> units_of(ClassifierImpl& model) {
  std::vector<int64_t> units;
  for (const auto& named : model.named_parameters()) {
    const int64_t depth = model.depth_of(named.key());
    units.push_back(depth >= 1 && depth <= model.layer_count() ? depth - 1 : -1);
  }
  return units;
}

TEST(LayerShards, FreeLayersBetweenUsesAndStepAsTheWholeModel) {
  OptimizerConfig adam;
  adam.type = OptimizerType::adam;
  adam.lr = 0.01;
  Classifier whole = make();
  auto plain = create_optimizer(adam, whole->parameters());

  Classifier sharded = make();
  Distributed group;  // a group of one
  const auto params = sharded->parameters();
  const auto units = units_of(*sharded);
  ShardedOptimizer shards(group, ShardStage::parameters, adam, params, 25.0, units);
  LayerShards layers(group, shards, params, units, params);
  sharded->set_block_shards(&layers);
  ASSERT_EQ(layers.sharded_parameters().size(), 2u * 12);  // 2 layers of 12 tensors

  for (uint64_t step = 0; step < 2; ++step) {
    plain->zero_grad();
    loss_of(whole, 100 + step).backward();
    plain->step();

    layers.from_whole();
    for (const auto& p : layers.sharded_parameters()) EXPECT_EQ(p.storage().nbytes(), 0u);
    loss_of(sharded, 100 + step).backward();
    for (const auto& p : layers.sharded_parameters()) {
      EXPECT_FALSE(p.grad().defined());  // reduced into the slices in backward
      EXPECT_EQ(p.storage().nbytes(), 0u);
    }
    shards.step();
    for (auto& p : params) p.mutable_grad() = torch::Tensor();
    layers.hold_whole();
    const auto a = whole->named_parameters(), b = sharded->named_parameters();
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_TRUE(torch::equal(a[i].value(), b[i].value())) << a[i].key() << " step " << step;
    }
  }
}

// The sharded model of a group of one, its layers freed.
struct Freed {
  Classifier model = make();
  Distributed group;
  std::vector<torch::Tensor> params = model->parameters();
  std::vector<int64_t> units = units_of(*model);
  OptimizerConfig adam = [] {
    OptimizerConfig o;
    o.type = OptimizerType::adam;
    return o;
  }();
  ShardedOptimizer shards{group, ShardStage::parameters, adam, params, 25.0, units};
  LayerShards layers{group, shards, params, units, params};
  Freed() {
    model->set_block_shards(&layers);
    layers.from_whole();
    layers.measure_between_steps();
  }
  bool all_freed() const {
    for (const auto& p : layers.sharded_parameters()) {
      if (p.storage().nbytes() != 0) return false;
    }
    return true;
  }
};

// Validation runs the forward as training does, a layer gathered at a time: the logits
// of the whole model, and the layers freed again after it.
TEST(LayerShards, EvaluateFromFreedLayersWithTheWholeModelsLogits) {
  Classifier whole = make();
  Freed sharded;
  whole->eval();
  sharded.model->eval();
  torch::NoGradGuard no_grad;
  const auto input = test_util::batch({{3, 5, 7, 9, 11, 2}, {4, 6}, {8, 1, 12, 30, 17}, {13}});
  const torch::Tensor logits = sharded.model->forward(input);
  EXPECT_TRUE(sharded.all_freed());
  EXPECT_TRUE(torch::equal(logits, whole->forward(input)));
  EXPECT_EQ(sharded.layers.peak_bytes(),
            sharded.layers.between_steps_bytes() + sharded.layers.largest_layer_bytes())
      << "one layer whole at a time";
}

// A save from freed layers gathers each as its tensors are written (fill), then the
// rest (gather_rest): the file is byte for byte the whole model's, and the layers end
// freed. A tensor asked for out of the layers' order is an error.
TEST(LayerShards, SaveFreedLayersOneAtATimeAsTheWholeModelsBytes) {
  const std::string dir = ::testing::TempDir();
  Freed sharded;
  Checkpoint c;
  c.tensor_blobs["model"] = named_tensors(*sharded.model);
  c.fill_freed["model"] = [&](const torch::Tensor& t) { sharded.layers.fill(t); };
  save_checkpoint(dir + "/freed.ckpt", c);
  sharded.layers.gather_rest();
  EXPECT_TRUE(sharded.all_freed());
  EXPECT_LE(sharded.layers.peak_bytes(),
            sharded.layers.between_steps_bytes() + sharded.layers.largest_layer_bytes());

  Classifier whole = make();
  Checkpoint w;
  w.tensor_blobs["model"] = named_tensors(*whole);
  save_checkpoint(dir + "/whole.ckpt", w);
  EXPECT_EQ(testing::slurp(dir + "/freed.ckpt"), testing::slurp(dir + "/whole.ckpt"));

  const auto& layer = sharded.layers.sharded_parameters();
  sharded.layers.fill(layer.back());
  EXPECT_THROW(sharded.layers.fill(layer.front()), Error);
}

}  // namespace layer_shards_test
}  // namespace sift
