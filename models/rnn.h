// Recurrent classifier: word embeddings, a (bi)LSTM or GRU over the packed sequences,
// pooling over the valid time steps (max, mean or learned attention), then dropout and
// a linear layer.
#pragma once

#include "models/model.h"

namespace sift {

class RnnImpl : public ClassifierImpl {
 public:
  // Throws sift::Error for a pooling the model does not do ("cls").
  RnnImpl(const ModelConfig& config, const ModelShape& shape);
  torch::Tensor forward(const ModelInput& input) override;

 private:
  enum class Pooling { max, mean, attention };

  // The recurrence one layer at a time, each layer a block for train.gradient_checkpointing,
  // with the same weights, kernels and dropout draws as the multi-layer module.
  torch::Tensor layer_by_layer(const torch::Tensor& data, const torch::Tensor& batch_sizes);
  torch::Tensor run_layer(int64_t layer, const torch::Tensor& data,
                          const torch::Tensor& batch_sizes);
  std::vector<torch::Tensor> layer_parameters(int64_t layer) const;

  Pooling pooling_ = Pooling::max;
  int64_t layers_ = 1;
  int64_t hidden_ = 0;
  bool bidirectional_ = true;
  double between_dropout_ = 0.0;
  torch::nn::Embedding embedding_{nullptr};
  torch::nn::LSTM lstm_{nullptr};  // one of lstm_ and gru_ is set
  torch::nn::GRU gru_{nullptr};
  torch::nn::Linear attention_{nullptr};        // W (with a bias) of score = v^T tanh(W h + b)
  torch::nn::Linear attention_query_{nullptr};  // v
  torch::nn::Dropout dropout_{nullptr};
  torch::nn::Linear output_{nullptr};
};
TORCH_MODULE(Rnn);

// The suffix LibTorch's LSTM and GRU give one layer's and direction's parameters
// ("weight_ih" + "_l1_reverse"): the module, its export and its pruned units name them so.
std::string rnn_suffix(int64_t layer, bool reverse);

// Its forward as TorchScript source, for export (models/rnn_script.cc).
std::string rnn_script(const ModelConfig& config, ScriptWriter& writer);

}  // namespace sift
