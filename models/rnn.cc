#include "models/rnn.h"

#include <limits>

#include "framework/error.h"
#include "models/embeddings.h"

namespace sift {

namespace rnn_utils = torch::nn::utils::rnn;

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
  if (config.cell != "lstm" && config.cell != "gru") {
    throw Error("model.cell: The rnn model's cell is lstm or gru.");
  }
  embedding_ = register_module("embedding", make_word_embedding(config, shape));
  // LibTorch applies this dropout between layers only (and warns for one layer).
  const double between = config.layers > 1 ? config.dropout : 0.0;
  if (config.cell == "gru") {
    gru_ = register_module("rnn", torch::nn::GRU(torch::nn::GRUOptions(config.dim, config.hidden)
                                                     .num_layers(config.layers)
                                                     .bidirectional(config.bidirectional)
                                                     .dropout(between)
                                                     .batch_first(true)));
  } else {
    lstm_ = register_module("rnn",
                            torch::nn::LSTM(torch::nn::LSTMOptions(config.dim, config.hidden)
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
  auto out_packed = lstm_ ? std::get<0>(lstm_->forward_with_packed_input(packed))
                          : std::get<0>(gru_->forward_with_packed_input(packed));
  auto states = std::get<0>(rnn_utils::pad_packed_sequence(out_packed, /*batch_first=*/true,
                                                           /*padding_value=*/0.0,
                                                           /*total_length=*/length));
  const auto valid = valid_positions(input.lengths, length, states.device()).unsqueeze(2);
  torch::Tensor pooled;
  switch (pooling_) {
    case Pooling::max:
      pooled = std::get<0>(
          states.masked_fill(~valid, -std::numeric_limits<float>::infinity()).max(1));
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

}  // namespace sift
