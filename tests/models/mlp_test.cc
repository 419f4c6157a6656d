#include "models/mlp.h"

#include <gtest/gtest.h>

#include <map>

#include "core/error.h"
#include "models/script_writer.h"
#include "tests/models/bag_batch.h"

namespace sift {
namespace mlp_test {

ModelConfig config(int64_t layers = 2, double dropout = 0.0) {
  ModelConfig c;
  c.type = "mlp";
  c.dim = 8;
  c.hidden = 6;
  c.layers = layers;
  c.dropout = dropout;
  return c;
}

using test_util::bags;
ModelShape shape(int64_t ids, int64_t classes, bool sparse = false) {
  return test_util::bag_shape(ids, classes, sparse);
}

TEST(Mlp, OutputShapeIsBatchByClasses) {
  Mlp model(config(), shape(20, 4));
  const auto logits = model->forward(bags());
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(logits.dtype(), torch::kFloat32);
}

TEST(Mlp, HasOneLinearLayerPerHiddenLayer) {
  Mlp model(config(3), shape(20, 4));
  auto params = model->named_parameters();
  EXPECT_EQ(params["hidden_0.weight"].sizes(), (std::vector<int64_t>{6, 8}));
  EXPECT_EQ(params["hidden_2.weight"].sizes(), (std::vector<int64_t>{6, 6}));
  EXPECT_EQ(params["output.weight"].sizes(), (std::vector<int64_t>{4, 6}));
  EXPECT_FALSE(params.contains("hidden_3.weight"));
  EXPECT_THROW(Mlp(config(0), shape(20, 4)), Error);
}

TEST(Mlp, TrainingReducesTheLoss) {
  torch::manual_seed(1);
  Mlp model(config(2, 0.1), shape(20, 3));
  model->train();
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(0.05));
  const auto labels = torch::tensor({0, 1, 2}, torch::kInt64);
  double first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    adam.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model->forward(bags()), labels);
    loss.backward();
    adam.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, first / 4) << first << " -> " << last;
}

TEST(Mlp, SparseGradients) {
  Mlp model(config(), shape(50, 2, /*sparse=*/true));
  model->forward(bags()).sum().backward();
  EXPECT_TRUE(model->named_parameters()["embedding.weight"].grad().is_sparse());
}

TEST(Mlp, RecomputedLayersGiveTheSameGradients) {
  auto gradients = [](int64_t every) {
    torch::manual_seed(3);
    Mlp model(config(3, 0.2), shape(20, 3));
    model->set_recompute(RecomputePolicy{every});
    torch::manual_seed(4);  // the same dropout masks
    model->forward(bags()).pow(2).sum().backward();
    return model->named_parameters()["hidden_0.weight"].grad().clone();
  };
  EXPECT_TRUE(torch::allclose(gradients(0), gradients(1), 1e-6, 1e-6));
}

// The TorchScript the exporter writes computes the C++ model's logits.
TEST(Mlp, ScriptAgreesWithTheModule) {
  for (bool int8 : {false, true}) {
    torch::manual_seed(5);
    const ModelConfig c = config(2, 0.5);
    Mlp model(c, shape(30, 4));
    model->eval();
    std::map<std::string, torch::Tensor> tensors;
    for (const auto& p : model->named_parameters()) tensors[p.key()] = p.value();
    ScriptWriter writer(tensors, int8 ? WeightFormat::int8 : WeightFormat::fp32,
                        /*int8_min_macs=*/0);
    torch::jit::Module script = writer.finish(mlp_script(c, writer));
    const ModelInput in = bags();
    torch::NoGradGuard no_grad;
    const auto expected = model->forward(in);
    const auto got = script.forward({in.ids, in.offsets}).toTensor();
    ASSERT_EQ(got.sizes(), expected.sizes());
    const double diff = (got - expected).abs().max().item<double>();
    if (int8) {
      EXPECT_LT(diff, 0.1 * expected.abs().max().item<double>());
    } else {
      EXPECT_LT(diff, 1e-5);
    }
    const auto probs = script.run_method("predict_proba", in.ids, in.offsets).toTensor();
    EXPECT_TRUE(torch::allclose(probs.sum(1), torch::ones({3}), 1e-5, 1e-5));
  }
}

TEST(ModelRegistry, CreatesMlpByNameWithItsTraits) {
  const ModelSpec& spec = find_model("mlp");
  EXPECT_EQ(spec.input, InputKind::bag);
  EXPECT_TRUE(spec.traits.recomputation);
  EXPECT_TRUE(spec.traits.sparse_gradients);
  EXPECT_TRUE(static_cast<bool>(spec.script));
  Classifier model = spec.create(config(), shape(30, 2));
  EXPECT_EQ(model->forward(bags()).sizes(), (std::vector<int64_t>{3, 2}));
}

TEST(ModelRegistry, EveryModelHasTraitsAFactoryAndAScript) {
  const auto traits = model_traits();
  ASSERT_EQ(traits.size(), model_registry().size());
  for (const auto& t : traits) {
    const ModelSpec& spec = find_model(t.name);
    EXPECT_FALSE(t.summary.empty()) << t.name;
    EXPECT_FALSE(t.options.empty()) << t.name;
    EXPECT_TRUE(static_cast<bool>(spec.create)) << t.name;
    EXPECT_TRUE(static_cast<bool>(spec.script)) << t.name;
    for (const auto& key : t.options) EXPECT_EQ(key.rfind("model.", 0), 0u) << key;
  }
  EXPECT_FALSE(find_model("fasttext").traits.recomputation);
}

}  // namespace mlp_test
}  // namespace sift
