#include "models/fasttext.h"

#include "models/init.h"

namespace sift {

FastTextImpl::FastTextImpl(const ModelConfig& config, const ModelShape& shape) {
  // Sparse gradients: a step touches only the rows of the batch's words, not the
  // millions of hash buckets.
  embedding_ = register_module(
      "embedding",
      torch::nn::EmbeddingBag(torch::nn::EmbeddingBagOptions(shape.num_ids, config.dim)
                                  .mode(torch::kMean)
                                  .sparse(shape.sparse_gradients)));
  output_ = register_module("output", torch::nn::Linear(config.dim, shape.num_classes));
  // fastText's initialisation: small uniform inputs, zero output layer.
  torch::NoGradGuard no_grad;
  const double bound = 1.0 / static_cast<double>(config.dim);
  fast_uniform_(embedding_->weight, -bound, bound);
  output_->weight.zero_();
  output_->bias.zero_();
}

torch::Tensor FastTextImpl::forward(const ModelInput& input) {
  return output_->forward(embedding_->forward(input.ids, input.offsets));
}

}  // namespace sift
