#include "models/bert.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "core/error.h"
#include "models/embeddings.h"

namespace sift {

namespace {

torch::nn::LayerNorm layer_norm(const ModelConfig& config) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.dim}).eps(config.layer_norm_eps));
}

void check_options(const ModelConfig& config) {
  if (config.heads < 1 || config.dim % config.heads != 0) {
    throw Error(fmt::format("model.heads: model.dim {} must be divisible by the {} heads.",
                            config.dim, config.heads));
  }
  if (config.position_offset >= config.max_positions) {
    throw Error(
        fmt::format("model.position_offset: {} leaves no position of the {} "
                    "(model.max_positions)",
                    config.position_offset, config.max_positions));
  }
  if (!pools_tokens(config.pooling)) {
    throw Error(
        fmt::format("model.pooling: The BERT-family encoder pools with 'cls', 'mean' or "
                    "'max', not '{}'.",
                    config.pooling));
  }
}

}  // namespace

BertLayerImpl::BertLayerImpl(const ModelConfig& config)
    : pre_norm_(config.pre_norm),
      gelu_approximation_(config.ff_activation == "gelu_tanh" ? "tanh" : "none") {
  attention_ =
      register_module("attention", SelfAttention(config.dim, config.heads, config.dropout));
  attention_norm_ = register_module("attention_norm", layer_norm(config));
  ff_in_ = register_module("ff_in", torch::nn::Linear(config.dim, config.ff_dim));
  ff_out_ = register_module("ff_out", torch::nn::Linear(config.ff_dim, config.dim));
  ff_norm_ = register_module("ff_norm", layer_norm(config));
  dropout_ = register_module("dropout", torch::nn::Dropout(config.dropout));
}

torch::Tensor BertLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& key_bias) {
  if (pre_norm_) {
    auto h = x + dropout_->forward(attention_->forward(attention_norm_->forward(x), key_bias));
    auto ff =
        ff_out_->forward(torch::gelu(ff_in_->forward(ff_norm_->forward(h)), gelu_approximation_));
    return h + dropout_->forward(ff);
  }
  auto h = attention_norm_->forward(x + dropout_->forward(attention_->forward(x, key_bias)));
  auto ff = ff_out_->forward(torch::gelu(ff_in_->forward(h), gelu_approximation_));
  return ff_norm_->forward(h + dropout_->forward(ff));
}

BertImpl::BertImpl(const ModelConfig& config, const ModelShape& shape)
    : pooling_(config.pooling),
      activation_(config.head_activation),
      max_tokens_(config.max_positions - config.position_offset),
      position_offset_(config.position_offset),
      layer_repeats_(config.layer_repeats) {
  check_options(config);
  const int64_t width = config.embedding_dim > 0 ? config.embedding_dim : config.dim;
  embedding_ = register_module("embedding", torch::nn::Embedding(shape.num_ids, width));
  positions_ = register_module("positions", torch::nn::Embedding(config.max_positions, width));
  if (config.token_types > 0) {
    token_types_ = register_module("token_types", torch::nn::Embedding(config.token_types, width));
  }
  embedding_norm_ = register_module(
      "embedding_norm",
      torch::nn::LayerNorm(torch::nn::LayerNormOptions({width}).eps(config.layer_norm_eps)));
  if (width != config.dim) {
    embedding_project_ = register_module("embedding_project", torch::nn::Linear(width, config.dim));
  }
  dropout_ = register_module("dropout", torch::nn::Dropout(config.dropout));
  layers_ = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.layers; ++i) layers_->push_back(BertLayer(config));
  if (config.pre_norm) final_norm_ = register_module("final_norm", layer_norm(config));
  head_ = register_module("head", torch::nn::Linear(config.dim, config.dim));
  output_ = register_module("output", torch::nn::Linear(config.dim, shape.num_classes));
  if (shape.masked_lm) mlm_ = register_module("mlm", MaskedLmHead(config, width, shape.num_ids));

  // BERT's initialisation: N(0, 0.02) weights, zero biases; imports replace them.
  // But the token-type table starts at zero: a text of one segment (Sift's texts, packed
  // pretraining rows) adds its row 0 to every token, and drawn N(0, 0.02) like the
  // embeddings and positions that row is a third of every token's input, the same for all.
  // With it `sift pretrain` learned the 40-word cycle (bench/mlm_reference.py, lr 0.003, 600
  // steps) at half the pace of the reference, which has no token types: accuracy at [MASK]
  // 0.35 against 0.60 (16 seeds); at zero 0.49 (#43, docs/pretraining.md).
  // The row is drawn, then zeroed, so that every other weight keeps the draw it had: a
  // seeded run's initialisation changes in that table alone (skipping its draw shifted the
  // fine-tuned head of ImportPiecesCli's ALBERT from 0.9+ to 0.67 validation accuracy).
  torch::NoGradGuard no_grad;
  for (auto& p : named_parameters()) {
    if (p.key().find("norm") != std::string::npos) continue;
    if (p.key().size() > 5 && p.key().substr(p.key().size() - 5) == ".bias") {
      p.value().zero_();
    } else {
      p.value().normal_(0.0, 0.02);
      if (p.key() == "token_types.weight") p.value().zero_();
    }
  }
  // model.positions sinusoidal: the table (still learned) starts as Vaswani et al.'s sinusoids
  // at the drawn table's spread (0.02), so that nearby positions start alike and attention
  // can find a token's neighbours from the first step. From N(0, 0.02) the positions are
  // unrelated, and masked-token pretraining on AG News in rows of 128 stayed at the unigram
  // plateau (#43, docs/pretraining.md).
  if (config.positions == "sinusoidal") {
    positions_->weight.copy_(sinusoidal_table(config.max_positions, width) *
                             (0.02 * std::sqrt(2.0)));
  }
  if (config.freeze_embeddings) embedding_->weight.set_requires_grad(false);
}

torch::Tensor BertImpl::embed(const torch::Tensor& ids) {
  const int64_t length = ids.size(1);
  const torch::Tensor rows =
      recompute_.shards ? recompute_.shards->gather_rows(embedding_->weight, ids) : ids;
  auto x = embedding_->forward(rows) +
           positions_->weight.narrow(0, position_offset_, length).unsqueeze(0);
  if (token_types_) x = x + token_types_->weight[0];
  x = embedding_norm_->forward(x);
  if (embedding_project_) x = embedding_project_->forward(x);
  return dropout_->forward(x);
}

torch::Tensor BertImpl::token_states(const ModelInput& input, torch::Tensor& valid,
                                     torch::Tensor& lengths) {
  torch::Tensor ids = input.ids;
  if (ids.size(1) > max_tokens_) ids = ids.narrow(1, 0, max_tokens_);
  const int64_t length = ids.size(1);
  lengths = input.lengths.to(torch::kInt64).clamp(1, length);
  valid = valid_positions(lengths, length, ids.device());
  // Each text keeps at least one real key (lengths >= 1).
  torch::Tensor x = run_encoder_layers<BertLayerImpl>(
      layers_, recompute_, is_training(), embed(ids), key_padding_bias(valid), layer_repeats_);
  return final_norm_ ? final_norm_->forward(x) : x;
}

torch::Tensor BertImpl::masked_token_logits(const ModelInput& input,
                                            const torch::Tensor& positions) {
  if (!mlm_) return {};
  torch::Tensor valid, lengths;
  const torch::Tensor x = token_states(input, valid, lengths);
  const torch::Tensor states = x.reshape({-1, x.size(2)}).index_select(0, positions);
  return mlm_->forward(states, embedding_->weight);
}

torch::Tensor BertImpl::forward(const ModelInput& input) {
  torch::Tensor valid, lengths;
  const torch::Tensor x = token_states(input, valid, lengths);
  auto h = head_->forward(pool_tokens(pooling_, x, valid, lengths));
  h = activation_ == "tanh"   ? torch::tanh(h)
      : activation_ == "relu" ? torch::relu(h)
                              : torch::gelu(h);
  return output_->forward(dropout_->forward(h));
}

}  // namespace sift
