#include "models/textcnn.h"

#include <fmt/format.h>

#include <algorithm>

#include "framework/error.h"
#include "models/embeddings.h"

namespace sift {

TextCnnImpl::TextCnnImpl(const ModelConfig& config, const ModelShape& shape)
    : widths_(config.widths) {
  if (widths_.empty()) throw Error("model.widths: TextCNN needs at least one filter width");
  for (int64_t w : widths_) {
    if (w < 1) throw Error(fmt::format("model.widths: a filter width must be at least 1, not {}", w));
  }
  widest_ = *std::max_element(widths_.begin(), widths_.end());
  embedding_ = register_module("embedding", make_word_embedding(config, shape));
  convs_ = register_module("convs", torch::nn::ModuleList());
  for (int64_t w : widths_) {
    convs_->push_back(torch::nn::Conv1d(torch::nn::Conv1dOptions(config.dim, config.filters, w)));
  }
  dropout_ = register_module("dropout", torch::nn::Dropout(config.dropout));
  output_ = register_module(
      "output", torch::nn::Linear(config.filters * static_cast<int64_t>(widths_.size()),
                                  shape.num_classes));
}

torch::Tensor TextCnnImpl::forward(const ModelInput& input) {
  const int64_t length = input.ids.size(1);
  const auto valid = valid_positions(input.lengths, length, input.ids.device());
  // Padding positions are zeroed whatever row 0 holds, so a window that must reach past
  // a short sequence's end sees the same zeros alone or in a batch.
  auto x = embedding_->forward(input.ids) * valid.unsqueeze(2).to(torch::kFloat);
  x = x.transpose(1, 2);  // [batch, dim, length]: Conv1d's layout
  // Sequences shorter than the widest filter: pad to it so every width has a window.
  if (length < widest_) x = torch::nn::functional::pad(
      x, torch::nn::functional::PadFuncOptions({0, widest_ - length}));
  const int64_t padded = std::max(length, widest_);
  auto lengths = input.lengths.to(input.ids.device()).unsqueeze(1);
  std::vector<torch::Tensor> pooled;
  pooled.reserve(widths_.size());
  for (size_t i = 0; i < widths_.size(); ++i) {
    const int64_t w = widths_[i];
    auto h = torch::relu(convs_[i]->as<torch::nn::Conv1d>()->forward(x));  // [b, f, padded-w+1]
    // Window t covers tokens t..t+w-1: valid when it ends inside the sequence, plus
    // window 0 for a sequence shorter than w (zeros complete it).
    auto starts = torch::arange(padded - w + 1, lengths.options()).unsqueeze(0);
    auto keep = (starts <= lengths - w) | (starts == 0);
    // After ReLU every value is >= 0, so 0 at masked windows never wins the max.
    h = h.masked_fill(~keep.unsqueeze(1), 0.0);
    pooled.push_back(std::get<0>(h.max(2)));
  }
  return output_->forward(dropout_->forward(torch::cat(pooled, 1)));
}

}  // namespace sift
