#include "models/rnn.h"

#include <limits>

#include "core/error.h"
#include "models/embeddings.h"

namespace sift {

namespace rnn_utils = torch::nn::utils::rnn;

std::string rnn_suffix(int64_t layer, bool reverse) {
  return "_l" + std::to_string(layer) + (reverse ? "_reverse" : "");
}

RnnImpl::RnnImpl(const ModelConfig& config, const ModelShape& shape) {
  if (config.pooling == "max") {
    pooling_ = Pooling::max;
  } else if (config.pooling == "mean") {
    pooling_ = Pooling::mean;
  } else if (config.pooling == "attention") {
    pooling_ = Pooling::attention;
  } else {
    throw Error("model.pooling: The rnn model pools by max, mean or attention.");
  }
  embedding_ = register_module("embedding", make_word_embedding(config, shape));
  // LibTorch applies this dropout between layers only (and warns for one layer).
  const double between = config.layers > 1 ? config.dropout : 0.0;
  layers_ = config.layers;
  hidden_ = config.hidden;
  bidirectional_ = config.bidirectional;
  between_dropout_ = between;
  if (config.cell == "gru") {
    gru_ = register_module("rnn", torch::nn::GRU(torch::nn::GRUOptions(config.dim, config.hidden)
                                                     .num_layers(config.layers)
                                                     .bidirectional(config.bidirectional)
                                                     .dropout(between)
                                                     .batch_first(true)));
  } else {
    lstm_ = register_module("rnn", torch::nn::LSTM(torch::nn::LSTMOptions(config.dim, config.hidden)
                                                       .num_layers(config.layers)
                                                       .bidirectional(config.bidirectional)
                                                       .dropout(between)
                                                       .batch_first(true)));
  }
  const int64_t features = config.hidden * (config.bidirectional ? 2 : 1);
  if (pooling_ == Pooling::attention) {
    attention_ = register_module("attention", torch::nn::Linear(features, features));
    attention_query_ = register_module(
        "attention_query", torch::nn::Linear(torch::nn::LinearOptions(features, 1).bias(false)));
  }
  dropout_ = register_module("dropout", torch::nn::Dropout(config.dropout));
  output_ = register_module("output", torch::nn::Linear(features, shape.num_classes));
}

torch::Tensor RnnImpl::forward(const ModelInput& input) {
  const int64_t length = input.ids.size(1);
  auto embedded = embedding_->forward(input.ids);
  // Packed by length: the recurrence stops at each sequence's end, so padding never
  // reaches a state (the backward direction starts at the last real token).
  auto packed = rnn_utils::pack_padded_sequence(embedded, input.lengths.to(torch::kCPU),
                                                /*batch_first=*/true, /*enforce_sorted=*/false);
  auto out_packed =
      recompute_.every > 0 && is_training()
          ? rnn_utils::PackedSequence(layer_by_layer(packed.data(), packed.batch_sizes()),
                                      packed.batch_sizes(), packed.sorted_indices(),
                                      packed.unsorted_indices())
      : lstm_ ? std::get<0>(lstm_->forward_with_packed_input(packed))
              : std::get<0>(gru_->forward_with_packed_input(packed));
  auto states = std::get<0>(rnn_utils::pad_packed_sequence(out_packed, /*batch_first=*/true,
                                                           /*padding_value=*/0.0,
                                                           /*total_length=*/length));
  const auto valid = valid_positions(input.lengths, length, states.device()).unsqueeze(2);
  torch::Tensor pooled;
  switch (pooling_) {
    case Pooling::max:
      pooled =
          std::get<0>(states.masked_fill(~valid, -std::numeric_limits<float>::infinity()).max(1));
      break;
    case Pooling::mean: {
      // Padded steps are zero after pad_packed_sequence; masking keeps that explicit.
      auto counts = input.lengths.to(states.device()).unsqueeze(1).to(states.scalar_type());
      pooled = states.masked_fill(~valid, 0.0).sum(1) / counts;
      break;
    }
    case Pooling::attention: {
      auto scores = attention_query_->forward(torch::tanh(attention_->forward(states)));
      scores = scores.masked_fill(~valid, -std::numeric_limits<float>::infinity());
      pooled = (torch::softmax(scores, 1) * states).sum(1);
      break;
    }
  }
  return output_->forward(dropout_->forward(pooled));
}

std::vector<torch::Tensor> RnnImpl::layer_parameters(int64_t layer) const {
  const torch::nn::Module& rnn = lstm_ ? static_cast<const torch::nn::Module&>(*lstm_)
                                       : static_cast<const torch::nn::Module&>(*gru_);
  const auto named = rnn.named_parameters();
  std::vector<torch::Tensor> params;
  // The order torch::lstm / torch::gru take: per direction w_ih, w_hh, b_ih, b_hh.
  for (const bool reverse : {false, true}) {
    if (reverse && !bidirectional_) break;
    for (const char* kind : {"weight_ih", "weight_hh", "bias_ih", "bias_hh"}) {
      params.push_back(named[kind + rnn_suffix(layer, reverse)]);
    }
  }
  return params;
}

torch::Tensor RnnImpl::run_layer(int64_t layer, const torch::Tensor& data,
                                 const torch::Tensor& batch_sizes) {
  // The multi-layer module applies dropout to each layer's output but the last's.
  torch::Tensor input = layer > 0 && between_dropout_ > 0
                            ? torch::dropout(data, between_dropout_, is_training())
                            : data;
  const int64_t max_batch = batch_sizes[0].item<int64_t>();
  auto h0 = torch::zeros({bidirectional_ ? 2 : 1, max_batch, hidden_}, input.options());
  const auto params = layer_parameters(layer);
  if (lstm_) {
    return std::get<0>(torch::lstm(input, batch_sizes, {h0, h0}, params, /*has_biases=*/true,
                                   /*num_layers=*/1, /*dropout=*/0.0, is_training(),
                                   bidirectional_));
  }
  return std::get<0>(torch::gru(input, batch_sizes, h0, params, /*has_biases=*/true,
                                /*num_layers=*/1, /*dropout=*/0.0, is_training(), bidirectional_));
}

torch::Tensor RnnImpl::layer_by_layer(const torch::Tensor& data, const torch::Tensor& batch_sizes) {
  torch::Tensor x = data;
  for (int64_t l = 0; l < layers_; ++l) {
    auto block = [this, l, batch_sizes](const std::vector<torch::Tensor>& in) {
      return run_layer(l, in[0], batch_sizes);
    };
    x = run_block(recompute_, l, is_training(), layer_parameters(l), block, {x});
  }
  return x;
}

}  // namespace sift
