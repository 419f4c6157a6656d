// BERT's masked-token prediction head (BertLMPredictionHead): a dense layer from the
// encoder's width to the embeddings' width, exact GELU, LayerNorm, then scores against the
// input embedding table itself (tied: no output matrix of its own) plus a bias per id.
// An encoder built for pretraining (ModelShape::masked_lm) holds it as its module "mlm".
#pragma once

#include "models/model.h"

namespace sift {

class MaskedLmHeadImpl : public torch::nn::Module {
 public:
  // `width`: the embedding table's columns; `num_ids`: its rows.
  MaskedLmHeadImpl(const ModelConfig& config, int64_t width, int64_t num_ids);
  // Scores [n, num_ids] of token states [n, dim] against `embeddings` [num_ids, width].
  torch::Tensor forward(const torch::Tensor& states, const torch::Tensor& embeddings);

 private:
  torch::nn::Linear dense_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  torch::Tensor bias_;
};
TORCH_MODULE(MaskedLmHead);

}  // namespace sift
