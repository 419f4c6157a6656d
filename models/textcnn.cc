#include "models/textcnn.h"

#include "models/embeddings.h"

namespace sift {

namespace {

// One filter width: wide convolution, ReLU, max over the windows that overlap the text.
// x [batch, dim, length]; returns [batch, filters].
torch::Tensor conv_block(torch::nn::Conv1dImpl& conv, int64_t w, const torch::Tensor& x,
                         const torch::Tensor& lengths, int64_t length) {
  // Wide convolution, as Kim's code pads each sentence with w-1 zeros at both ends:
  // windows at the edges see the sentence's first and last words (a question's "what"),
  // and a text shorter than w still has windows.
  auto padded =
      torch::nn::functional::pad(x, torch::nn::functional::PadFuncOptions({w - 1, w - 1}));
  auto h = torch::relu(conv.forward(padded));
  // Window t covers tokens t-w+1..t; it is kept when it overlaps the text (t < n+w-1).
  // Windows lying wholly in the batch's padding are dropped, so a text's output does not
  // depend on how long its batch's longest text is.
  auto ends = torch::arange(length + w - 1, lengths.options()).unsqueeze(0);
  auto keep = ends < lengths + (w - 1);
  // After ReLU every value is >= 0, so 0 at dropped windows never wins the max.
  h = h.masked_fill(~keep.unsqueeze(1), 0.0);
  return std::get<0>(h.max(2));
}

}  // namespace

TextCnnImpl::TextCnnImpl(const ModelConfig& config, const ModelShape& shape)
    : widths_(config.widths) {
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
  // Padding positions are zeroed whatever row 0 holds: a window reaching past a
  // sequence's end sees the same zeros alone or in a batch.
  auto x = embedding_->forward(input.ids) * valid.unsqueeze(2).to(torch::kFloat);
  x = x.transpose(1, 2);  // [batch, dim, length]: Conv1d's layout
  auto lengths = input.lengths.to(input.ids.device()).unsqueeze(1);
  std::vector<torch::Tensor> pooled;
  pooled.reserve(widths_.size());
  for (size_t i = 0; i < widths_.size(); ++i) {
    auto conv = convs_->ptr<torch::nn::Conv1dImpl>(i);
    const int64_t w = widths_[i];
    auto block = [conv, w, lengths, length](const std::vector<torch::Tensor>& in) {
      return conv_block(*conv, w, in[0], lengths, length);
    };
    pooled.push_back(run_block(recompute_, static_cast<int64_t>(i), is_training(),
                               conv->parameters(), block, {x}));
  }
  return output_->forward(dropout_->forward(torch::cat(pooled, 1)));
}

}  // namespace sift
