#include "models/transformer.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "core/error.h"
#include "models/embeddings.h"

namespace sift {

int64_t encoder_depth(const std::string& name, int64_t layers,
                      std::initializer_list<const char*> above) {
  const std::string module = name.substr(0, name.find('.'));
  if (module == "layers") return std::stoll(name.substr(7, name.find('.', 7) - 7)) + 1;
  for (const char* m : above) {
    if (module == m) return layers + 1;
  }
  return 0;
}

torch::Tensor pool_tokens(const std::string& pooling, const torch::Tensor& x,
                          const torch::Tensor& valid, const torch::Tensor& lengths) {
  if (pooling == "cls") return x.select(1, 0);
  if (pooling == "mean") {
    auto weight = valid.unsqueeze(2).to(x.dtype());
    return (x * weight).sum(1) / lengths.to(x.device()).unsqueeze(1).to(x.dtype());
  }
  return std::get<0>(
      x.masked_fill(valid.logical_not().unsqueeze(2), -std::numeric_limits<float>::infinity())
          .max(1));
}

bool pools_tokens(const std::string& pooling) {
  return pooling == "cls" || pooling == "mean" || pooling == "max";
}

torch::Tensor key_padding_bias(const torch::Tensor& key_valid) {
  const int64_t batch = key_valid.size(0), length = key_valid.size(1);
  return torch::zeros({batch, 1, 1, length}, key_valid.options().dtype(torch::kFloat32))
      .masked_fill(key_valid.logical_not().view({batch, 1, 1, length}),
                   -std::numeric_limits<float>::infinity());
}

SelfAttentionImpl::SelfAttentionImpl(int64_t dim, int64_t heads, double dropout) : heads_(heads) {
  in_proj = register_module("in_proj", torch::nn::Linear(dim, 3 * dim));
  out_proj = register_module("out_proj", torch::nn::Linear(dim, dim));
  dropout_ = register_module("dropout", torch::nn::Dropout(dropout));
  // torch.nn.MultiheadAttention's initialisation.
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(in_proj->weight);
  in_proj->bias.zero_();
  out_proj->bias.zero_();
}

torch::Tensor SelfAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& key_bias) {
  const int64_t batch = x.size(0), length = x.size(1), dim = x.size(2);
  const int64_t head_dim = dim / heads_;
  // [batch, length, 3, heads, head_dim] -> 3 x [batch, heads, length, head_dim]
  auto qkv =
      in_proj->forward(x).view({batch, length, 3, heads_, head_dim}).permute({2, 0, 3, 1, 4});
  auto q = qkv[0] * (1.0 / std::sqrt(static_cast<double>(head_dim)));
  auto scores = torch::matmul(q, qkv[1].transpose(-2, -1)) + key_bias;
  // A padding key gets weight exactly 0, so padding cannot reach real tokens.
  auto weights = dropout_->forward(torch::softmax(scores, -1));
  auto out = torch::matmul(weights, qkv[2]).transpose(1, 2).reshape({batch, length, dim});
  return out_proj->forward(out);
}

TransformerLayerImpl::TransformerLayerImpl(int64_t dim, int64_t heads, int64_t ff_dim,
                                           double dropout) {
  attention_norm_ =
      register_module("attention_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
  attention_ = register_module("attention", SelfAttention(dim, heads, dropout));
  ff_norm_ = register_module("ff_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
  ff_in_ = register_module("ff_in", torch::nn::Linear(dim, ff_dim));
  ff_out_ = register_module("ff_out", torch::nn::Linear(ff_dim, dim));
  dropout_ = register_module("dropout", torch::nn::Dropout(dropout));
}

torch::Tensor TransformerLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& key_bias) {
  auto h = x + dropout_->forward(attention_->forward(attention_norm_->forward(x), key_bias));
  auto ff = ff_out_->forward(torch::gelu(ff_in_->forward(ff_norm_->forward(h))));
  return h + dropout_->forward(ff);
}

TransformerImpl::TransformerImpl(const ModelConfig& config, const ModelShape& shape)
    : pooling_(config.pooling), dim_(config.dim), max_tokens_(config.max_positions) {
  if (config.heads < 1 || config.dim % config.heads != 0) {
    throw Error(fmt::format(
        "model.heads: The embedding dimension (model.dim {}) must be divisible by the number "
        "of heads ({}).",
        config.dim, config.heads));
  }
  if (!pools_tokens(pooling_)) {
    throw Error(
        fmt::format("model.pooling: The Transformer pools with 'cls', 'mean' or 'max', not '{}' "
                    "('attention' pooling is the RNN's).",
                    pooling_));
  }
  // model.max_positions >= 1 and model.positions learned or sinusoidal: the option table's
  // checks.
  first_token_ = pooling_ == "cls" ? 1 : 0;
  const int64_t positions = max_tokens_ + first_token_;

  // Padding row 0, model.pretrained and model.freeze_embeddings as the other sequence
  // models have them.
  embedding_ = register_module("embedding", make_word_embedding(config, shape));
  if (config.positions == "learned") {
    positions_ = register_module("positions", torch::nn::Embedding(positions, dim_));
  } else {
    sinusoidal_ = register_buffer("sinusoidal_positions", sinusoidal_table(positions, dim_));
  }
  if (first_token_ == 1) cls_ = register_parameter("cls", torch::empty({dim_}));
  dropout_ = register_module("dropout", torch::nn::Dropout(config.dropout));
  layers_ = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.layers; ++i) {
    layers_->push_back(TransformerLayer(dim_, config.heads, config.ff_dim, config.dropout));
  }
  final_norm_ =
      register_module("final_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim_})));
  output_ = register_module("output", torch::nn::Linear(dim_, shape.num_classes));

  torch::NoGradGuard no_grad;
  // Random tokens N(0, 1/dim): unit variance after the sqrt(dim) scale, like the
  // sinusoids; learned positions and CLS start small (BERT's 0.02).
  if (config.pretrained.empty()) {
    embedding_->weight.normal_(0.0, 1.0 / std::sqrt(static_cast<double>(dim_)));
    embedding_->weight[0].zero_();
  }
  if (positions_) positions_->weight.normal_(0.0, 0.02);
  if (cls_.defined()) cls_.normal_(0.0, 0.02);
}

torch::Tensor TransformerImpl::forward(const ModelInput& input) {
  torch::Tensor ids = input.ids;
  if (ids.size(1) > max_tokens_) ids = ids.narrow(1, 0, max_tokens_);
  const int64_t batch = ids.size(0), length = ids.size(1);
  torch::Tensor lengths = input.lengths.to(torch::kInt64).clamp(1, length);
  const auto device = ids.device();

  // [batch, length]: true for real tokens.
  auto valid = valid_positions(lengths, length, device);
  const torch::Tensor rows =
      recompute_.shards ? recompute_.shards->gather_rows(embedding_->weight, ids) : ids;
  auto x = embedding_->forward(rows) * std::sqrt(static_cast<double>(dim_));
  auto key_valid = valid;
  if (cls_.defined()) {
    x = torch::cat({cls_.view({1, 1, dim_}).expand({batch, 1, dim_}).to(x.dtype()), x}, 1);
    key_valid = torch::cat({torch::ones({batch, 1}, valid.options()), valid}, 1);
  }
  const int64_t total = length + first_token_;
  x = x + (positions_ ? positions_->weight : sinusoidal_).narrow(0, 0, total).unsqueeze(0);
  x = dropout_->forward(x);

  // Each row keeps a real key (lengths >= 1, or the CLS token), so softmax never sees an
  // all -inf row.
  x = run_encoder_layers<TransformerLayerImpl>(layers_, recompute_, is_training(), x,
                                               key_padding_bias(key_valid));
  x = final_norm_->forward(x);

  return output_->forward(dropout_->forward(pool_tokens(pooling_, x, valid, lengths)));
}

}  // namespace sift
