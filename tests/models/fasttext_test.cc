#include "models/fasttext.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "tests/models/bag_batch.h"

namespace sift {
namespace fasttext_test {

ModelConfig config(int64_t dim) {
  ModelConfig c;
  c.dim = dim;
  return c;
}

using test_util::bags;
ModelShape shape(int64_t ids, int64_t classes, bool sparse = false) {
  return test_util::bag_shape(ids, classes, sparse);
}

TEST(FastText, OutputShapeIsBatchByClasses) {
  FastText model(config(8), shape(20, 4));
  const auto logits = model->forward(bags());
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(logits.dtype(), torch::kFloat32);
}

TEST(FastText, ZeroOutputLayerGivesUniformProbabilitiesAtInit) {
  FastText model(config(8), shape(20, 5));
  const auto probs = torch::softmax(model->forward(bags()), 1);
  EXPECT_TRUE(torch::allclose(probs, torch::full({3, 5}, 0.2)));
}

TEST(FastText, EmbeddingsAreSmallUniform) {
  FastText model(config(10), shape(1000, 2));
  const auto w = model->named_parameters()["embedding.weight"];
  EXPECT_EQ(w.sizes(), (std::vector<int64_t>{1000, 10}));
  EXPECT_LE(w.abs().max().item<double>(), 0.1 + 1e-7);
  EXPECT_GT(w.abs().max().item<double>(), 0.05);  // not all zero
}

TEST(FastText, GradientsFlowToBothLayers) {
  torch::manual_seed(0);
  FastText model(config(8), shape(20, 3));
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.5));
  const auto labels = torch::tensor({0, 1, 2}, torch::kInt64);
  // At init the output layer is zero, so only it gets a gradient; after one step the
  // embedding rows of the batch get one too.
  for (int step = 0; step < 2; ++step) {
    sgd.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model->forward(bags()), labels);
    loss.backward();
    if (step == 0) sgd.step();
  }
  auto params = model->named_parameters();
  const auto out_grad = params["output.weight"].grad();
  ASSERT_TRUE(out_grad.defined());
  EXPECT_GT(out_grad.abs().sum().item<double>(), 0.0);
  const auto emb_grad = params["embedding.weight"].grad();
  ASSERT_TRUE(emb_grad.defined());
  EXPECT_GT(emb_grad.index({torch::indexing::Slice(1, 7)}).abs().sum().item<double>(), 0.0);
  // Rows no bag uses get no gradient.
  EXPECT_EQ(emb_grad[0].abs().sum().item<double>(), 0.0);
  EXPECT_EQ(emb_grad.index({torch::indexing::Slice(7, 20)}).abs().sum().item<double>(), 0.0);
}

TEST(FastText, TrainingReducesTheLoss) {
  torch::manual_seed(1);
  FastText model(config(8), shape(20, 3));
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(1.0));
  const auto labels = torch::tensor({0, 1, 2}, torch::kInt64);
  double first = 0, last = 0;
  for (int step = 0; step < 50; ++step) {
    sgd.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model->forward(bags()), labels);
    loss.backward();
    sgd.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_NEAR(first, std::log(3.0), 1e-5);
  EXPECT_LT(last, first / 2);
}

TEST(FastText, SparseGradients) {
  FastText model(config(4), shape(50, 2, /*sparse=*/true));
  auto loss = model->forward(bags()).sum();
  loss.backward();
  EXPECT_TRUE(model->named_parameters()["embedding.weight"].grad().is_sparse());
}

TEST(ModelRegistry, CreatesFastTextByName) {
  const ModelSpec& spec = find_model("fasttext");
  EXPECT_EQ(spec.input, InputKind::bag);
  Classifier model = spec.create(config(6), shape(30, 2));
  EXPECT_EQ(model->forward(bags()).sizes(), (std::vector<int64_t>{3, 2}));
}

TEST(ModelRegistry, UnknownNameListsKnownModels) {
  try {
    find_model("gpt2");
    FAIL() << "expected a sift::Error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'gpt2'"), std::string::npos) << m;
    EXPECT_NE(m.find("fasttext"), std::string::npos) << m;
  }
}

}  // namespace fasttext_test
}  // namespace sift
