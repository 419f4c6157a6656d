#include "models/masked_lm_head.h"

namespace sift {

MaskedLmHeadImpl::MaskedLmHeadImpl(const ModelConfig& config, int64_t width, int64_t num_ids) {
  dense_ = register_module("dense", torch::nn::Linear(config.dim, width));
  norm_ = register_module(
      "norm",
      torch::nn::LayerNorm(torch::nn::LayerNormOptions({width}).eps(config.layer_norm_eps)));
  bias_ = register_parameter("bias", torch::zeros({num_ids}));
  // BERT's initialisation: N(0, 0.02) weights, zero biases.
  torch::NoGradGuard no_grad;
  dense_->weight.normal_(0.0, 0.02);
  dense_->bias.zero_();
}

torch::Tensor MaskedLmHeadImpl::forward(const torch::Tensor& states,
                                        const torch::Tensor& embeddings) {
  // Under bf16 autocast the dense layer's output is bf16; LayerNorm on the CPU refuses an
  // input of another dtype than its weight ("expected scalar type BFloat16 but found Float").
  const auto dense = torch::gelu(dense_->forward(states));
  const auto h = norm_->forward(dense.to(norm_->weight.scalar_type()));
  return torch::addmm(bias_.to(h.dtype()), h, embeddings.to(h.dtype()).t());
}

}  // namespace sift
