// The BERT-family encoder (Devlin et al. 2019) as Hugging Face's modeling files lay it out,
// so that imported checkpoints (`sift import hf`: BERT, DistilBERT, ELECTRA
// discriminators, MiniLM-style BERTs, ALBERT, XLM-R) give their published logits:
//   word + position (from model.position_offset: 0, RoBERTa's 2) + token type 0
//   embeddings, LayerNorm (model.layer_norm_eps), [ELECTRA, ALBERT: a Linear from
//   model.embedding_dim to model.dim];
//   post-LayerNorm blocks: x = LN(x + Attention(x)); x = LN(x + FF(x)), FF with exact
//   (erf) GELU or its tanh approximation (model.ff_activation: ALBERT's gelu_new), each
//   block applied model.layer_repeats times in a row (ALBERT's shared layers);
//   the [CLS] state (model.pooling cls) or the mean of real tokens (mean), a dense layer
//   with the head's activation (BERT's tanh pooler, DistilBERT's relu pre_classifier,
//   ELECTRA's gelu), dropout, and a Linear to the classes.
// Parameter names follow the zoo Transformer's where the parts are the same (attention,
// ff_in, ff_out), so its pruning units and TorchScript pieces serve both.
#pragma once

#include "models/masked_lm_head.h"
#include "models/model.h"
#include "models/transformer.h"

namespace sift {

// One block (BertLayer): attention, then the feed-forward network; post-LayerNorm
// (x = LN(x + Attention(x)), BERT's) or with model.pre_norm pre-LayerNorm
// (x = x + Attention(LN(x)), Xiong et al. 2020).
class BertLayerImpl : public torch::nn::Module {
 public:
  BertLayerImpl(const ModelConfig& config);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& key_bias);

 private:
  SelfAttention attention_{nullptr};
  torch::nn::LayerNorm attention_norm_{nullptr};
  torch::nn::Linear ff_in_{nullptr};
  torch::nn::Linear ff_out_{nullptr};
  torch::nn::LayerNorm ff_norm_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
  bool pre_norm_ = false;
  std::string gelu_approximation_;  // model.ff_activation: "none" (erf) or "tanh"
};
TORCH_MODULE(BertLayer);

class BertImpl : public ClassifierImpl {
 public:
  // Throws sift::Error naming the key for options it cannot build.
  BertImpl(const ModelConfig& config, const ModelShape& shape);
  torch::Tensor forward(const ModelInput& input) override;
  torch::Tensor masked_token_logits(const ModelInput& input,
                                    const torch::Tensor& positions) override;
  int64_t depth_of(const std::string& name) const override {
    return encoder_depth(name, layer_count(), {"final_norm", "head", "output", "mlm"});
  }
  int64_t layer_count() const override { return static_cast<int64_t>(layers_->size()); }
  // Under run.shard: parameters the token table is kept by rows, but for pretraining,
  // whose head scores every id against the whole table.
  std::string row_table() const override { return mlm_ ? "" : "embedding.weight"; }

 private:
  torch::Tensor embed(const torch::Tensor& ids);
  // Each token's final state [batch, length, dim]; `valid` [batch, length]: real tokens.
  torch::Tensor token_states(const ModelInput& input, torch::Tensor& valid, torch::Tensor& lengths);

  std::string pooling_;
  std::string activation_;
  int64_t max_tokens_;
  int64_t position_offset_;
  int64_t layer_repeats_;
  torch::nn::Embedding embedding_{nullptr};
  torch::nn::Embedding positions_{nullptr};
  torch::nn::Embedding token_types_{nullptr};  // undefined with model.token_types 0
  torch::nn::LayerNorm embedding_norm_{nullptr};
  torch::nn::Linear embedding_project_{nullptr};  // only with a narrower model.embedding_dim
  torch::nn::Dropout dropout_{nullptr};
  torch::nn::ModuleList layers_{nullptr};
  torch::nn::LayerNorm final_norm_{nullptr};  // only with model.pre_norm
  torch::nn::Linear head_{nullptr};
  torch::nn::Linear output_{nullptr};
  MaskedLmHead mlm_{nullptr};  // only when built for pretraining (ModelShape::masked_lm)
};
TORCH_MODULE(Bert);

// Its forward as TorchScript source, for export (models/bert_script.cc).
std::string bert_script(const ModelConfig& config, ScriptWriter& writer);
// Its encoder alone (a `sift pretrain` run's export): forward(ids, attention_mask) -> the
// states [batch, length, dim], pooled(ids, attention_mask) -> [batch, dim] (model.pooling:
// the [CLS] state or the mean over the mask, before the classifier's dense layer) and
// masked_token_scores(ids, attention_mask) -> [batch, length, ids] (the masked-token head,
// tied to the input embeddings: a score for every id at every position).
std::string bert_encoder_script(const ModelConfig& config, ScriptWriter& writer);

}  // namespace sift
