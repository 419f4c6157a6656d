// fastText-style classifier (Joulin et al. 2016): the mean of word and hashed n-gram
// embeddings, then one linear layer.
#pragma once

#include "models/model.h"

namespace sift {

class FastTextImpl : public ClassifierImpl {
 public:
  FastTextImpl(const ModelConfig& config, const ModelShape& shape);
  torch::Tensor forward(const ModelInput& input) override;

 private:
  torch::nn::EmbeddingBag embedding_{nullptr};
  torch::nn::Linear output_{nullptr};
};
TORCH_MODULE(FastText);

// Its forward as TorchScript source, for export (models/fasttext_script.cc).
std::string fasttext_script(const ModelConfig& config, ScriptWriter& writer);

}  // namespace sift
