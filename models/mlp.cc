#include "models/mlp.h"

#include <fmt/format.h>

#include "core/error.h"
#include "models/embeddings.h"

namespace sift {

MlpImpl::MlpImpl(const ModelConfig& config, const ModelShape& shape) {
  if (config.layers < 1) {
    throw Error(fmt::format("model.layers: the mlp needs at least one hidden layer, not {}",
                            config.layers));
  }
  // As fastText: sparse gradients touch only the rows of the batch's words and n-grams,
  // and the table starts uniform in +-1/dim (the linear layers keep LibTorch's default,
  // Kaiming-uniform, initialisation).
  UniformFill fill;
  embedding_ = register_module("embedding", make_bag_table(config, shape, fill));
  remember_fill("embedding.weight", fill);
  int64_t width = config.dim;
  for (int64_t i = 0; i < config.layers; ++i) {
    hidden_.push_back(
        register_module(fmt::format("hidden_{}", i), torch::nn::Linear(width, config.hidden)));
    width = config.hidden;
  }
  dropout_ = register_module("dropout", torch::nn::Dropout(config.dropout));
  output_ = register_module("output", torch::nn::Linear(width, shape.num_classes));
}

torch::Tensor MlpImpl::forward(const ModelInput& input) {
  torch::Tensor x = embedding_->forward(input.ids, input.offsets);
  for (size_t i = 0; i < hidden_.size(); ++i) {
    torch::nn::Linear layer = hidden_[i];
    torch::nn::Dropout dropout = dropout_;
    auto block = [layer, dropout](const std::vector<torch::Tensor>& in) mutable {
      return dropout->forward(torch::relu(layer->forward(in[0])));
    };
    x = run_block(recompute_, static_cast<int64_t>(i), is_training(), layer->parameters(), block,
                  {x});
  }
  return output_->forward(x);
}

}  // namespace sift
