// Bag-of-embeddings MLP: fastText's input (the mean of word and hashed n-gram
// embeddings), then model.layers ReLU hidden layers of width model.hidden with
// model.dropout, then a linear output layer.
#pragma once

#include <vector>

#include "models/model.h"

namespace sift {

class MlpImpl : public ClassifierImpl {
 public:
  MlpImpl(const ModelConfig& config, const ModelShape& shape);
  torch::Tensor forward(const ModelInput& input) override;

 private:
  torch::nn::EmbeddingBag embedding_{nullptr};
  std::vector<torch::nn::Linear> hidden_;  // registered as hidden_0, hidden_1, ...
  torch::nn::Dropout dropout_{nullptr};
  torch::nn::Linear output_{nullptr};
};
TORCH_MODULE(Mlp);

// Its forward as TorchScript source, for export (models/mlp_script.cc).
std::string mlp_script(const ModelConfig& config, ScriptWriter& writer);

}  // namespace sift
