// Transformer encoder classifier (Vaswani et al. 2017) with pre-LayerNorm blocks
// (Xiong et al. 2020), written with plain LibTorch modules and ops so that single
// layers can be re-run (gradient checkpointing) and rebuilt as TorchScript source.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>

#include "models/model.h"

namespace sift {

// Multi-head self-attention with an explicit key padding mask. The input projection
// is one [3 * dim, dim] Linear laid out as torch.nn.MultiheadAttention's in_proj
// (query rows, then key, then value; heads contiguous within each).
class SelfAttentionImpl : public torch::nn::Module {
 public:
  SelfAttentionImpl(int64_t dim, int64_t heads, double dropout);
  // x [batch, length, dim]; key_bias [batch, 1, 1, length]: 0 for real keys, -inf for
  // padding (every row must keep at least one real key). Returns [batch, length, dim].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& key_bias);

  torch::nn::Linear in_proj{nullptr};
  torch::nn::Linear out_proj{nullptr};

 private:
  int64_t heads_;
  torch::nn::Dropout dropout_{nullptr};  // on the attention weights
};
TORCH_MODULE(SelfAttention);

// One pre-LayerNorm encoder block:
//   x = x + Dropout(Attention(LN(x)));  x = x + Dropout(FF(LN(x))), FF = Linear-GELU-Linear.
class TransformerLayerImpl : public torch::nn::Module {
 public:
  TransformerLayerImpl(int64_t dim, int64_t heads, int64_t ff_dim, double dropout);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& key_bias);

 private:
  torch::nn::LayerNorm attention_norm_{nullptr};
  SelfAttention attention_{nullptr};
  torch::nn::LayerNorm ff_norm_{nullptr};
  torch::nn::Linear ff_in_{nullptr};
  torch::nn::Linear ff_out_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(TransformerLayer);

// The additive attention bias of a batch: [batch, 1, 1, length], 0 on real keys
// (key_valid [batch, length] true) and -inf on padding.
torch::Tensor key_padding_bias(const torch::Tensor& key_valid);

// One vector a text from the token states x [batch, length, dim]: model.pooling cls (the
// first token's), mean (over the valid tokens) or max (over them).
torch::Tensor pool_tokens(const std::string& pooling, const torch::Tensor& x,
                          const torch::Tensor& valid, const torch::Tensor& lengths);
// Whether pool_tokens (and pooling_script) know model.pooling `pooling`: cls, mean or max.
bool pools_tokens(const std::string& pooling);

// x through each block of `layers` (Layer: forward(x, key_bias)), each `repeats` times in a
// row (ALBERT's shared layers), re-running in backward the block runs that `policy` names
// (train.gradient_checkpointing; run i x repeats + r of block i).
template <typename Layer>
torch::Tensor run_encoder_layers(torch::nn::ModuleList& layers, const RecomputePolicy& policy,
                                 bool training, torch::Tensor x, const torch::Tensor& key_bias,
                                 int64_t repeats = 1) {
  int64_t run = 0;
  for (size_t i = 0; i < layers->size(); ++i) {
    auto layer = layers->ptr<Layer>(i);
    auto block = [layer, key_bias](const std::vector<torch::Tensor>& in) {
      return layer->forward(in[0], key_bias);
    };
    for (int64_t r = 0; r < repeats; ++r) {
      x = run_block(policy, run++, training, layer->parameters(), block, {x});
    }
  }
  return x;
}

// Token embedding x sqrt(dim) + positions (learned or sinusoidal), encoder blocks named
// "layers.0", "layers.1", ..., a final LayerNorm, pooling ("cls": a learned token put
// first; "mean"/"max": over real tokens only), dropout and a Linear to the classes.
// Padding never changes a text's logits. Texts longer than model.max_positions tokens
// are cut to their first max_positions tokens.
// The depth (ClassifierImpl::depth_of) of parameter `name` of an encoder whose blocks are
// the module list "layers" ("layers.3.ff_in.weight": 4); the modules named in `above` read
// the top block (layers + 1); the rest are embeddings (0).
int64_t encoder_depth(const std::string& name, int64_t layers,
                      std::initializer_list<const char*> above);

class TransformerImpl : public ClassifierImpl {
 public:
  // Throws sift::Error for options it cannot build (heads not dividing dim, pooling
  // "attention", max_positions < 1).
  TransformerImpl(const ModelConfig& config, const ModelShape& shape);
  torch::Tensor forward(const ModelInput& input) override;
  int64_t depth_of(const std::string& name) const override {
    return encoder_depth(name, layer_count(), {"final_norm", "output"});
  }
  int64_t layer_count() const override { return static_cast<int64_t>(layers_->size()); }
  // Under run.shard: parameters the token table (a quarter of a BERT-Small-shaped
  // encoder's weights with a 8k vocabulary) is kept by rows too, not whole on every rank.
  std::string row_table() const override { return "embedding.weight"; }

  // Tokens kept per text (model.max_positions).
  int64_t max_tokens() const { return max_tokens_; }

 private:
  std::string pooling_;
  int64_t dim_;
  int64_t max_tokens_;
  int64_t first_token_;  // position of the first token: 1 after a CLS token, else 0
  torch::nn::Embedding embedding_{nullptr};
  torch::nn::Embedding positions_{nullptr};  // learned positions, else undefined
  torch::Tensor sinusoidal_;                 // buffer [positions, dim], else undefined
  torch::Tensor cls_;                        // parameter [dim], "cls" pooling only
  torch::nn::Dropout dropout_{nullptr};
  torch::nn::ModuleList layers_{nullptr};
  torch::nn::LayerNorm final_norm_{nullptr};
  torch::nn::Linear output_{nullptr};
};
TORCH_MODULE(Transformer);

// Its forward as TorchScript source, for export (models/transformer_script.cc).
std::string transformer_script(const ModelConfig& config, ScriptWriter& writer);

// The opening of a sequence model's TorchScript forward(ids, lengths): ids cut to
// max_tokens, `batch`, `length`, `lengths` clamped to [1, length] and `valid` [batch, length].
std::string sequence_forward_start(int64_t max_tokens);

// The self-attention of the block whose names start with `prefix` ("layers.0.") over the
// expression `input`, as TorchScript lines that leave `attended` [batch, length, width]
// (before attention.out_proj) from `x`'s sizes and `key_bias`; shared with the
// BERT-family encoder's export.
std::string attention_script(const ModelConfig& config, const std::string& prefix,
                             const std::string& input, ScriptWriter& writer);

// A pre-norm encoder layer as the method encoder_block_{layer}: x + Attention(LN(x)),
// then h + FF(LN(h)), with LayerNorm's `eps` and the feed-forward activation
// `activation(x)`; the Transformer's layers and BERT's with model.pre_norm.
std::string pre_norm_block_method(const ModelConfig& config, int64_t layer, ScriptWriter& w,
                                  double eps,
                                  const std::function<std::string(const std::string&)>& activation);
// model.pooling's TorchScript line `pooled = ...` (cls, mean or max).
std::string pooling_script(const std::string& kind);

}  // namespace sift
