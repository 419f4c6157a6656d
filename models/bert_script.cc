// The BERT-family encoder as TorchScript: BertImpl::forward with one block method per
// layer (the attention lines are the zoo Transformer's), the same epsilon and head.
// Dropout is off at inference.
#include <fmt/format.h>

#include "models/bert.h"
#include "models/script_writer.h"

namespace sift {
namespace {

// The feed-forward network's activation (model.ff_activation) of `x`.
std::string ff_gelu(const ModelConfig& config, const std::string& x) {
  return config.ff_activation == "gelu_tanh" ? fmt::format("torch.gelu({}, approximate='tanh')", x)
                                             : fmt::format("torch.gelu({})", x);
}

std::string block_method(const ModelConfig& config, int64_t layer, ScriptWriter& w) {
  const std::string p = fmt::format("layers.{}.", layer);
  if (config.pre_norm) {
    return pre_norm_block_method(config, layer, w, config.layer_norm_eps,
                                 [&](const std::string& x) { return ff_gelu(config, x); });
  }
  const std::string attended = "x + " + w.linear("attended", p + "attention.out_proj");
  const std::string h =
      w.layer_norm("(" + attended + ")", p + "attention_norm", config.dim, config.layer_norm_eps);
  const std::string ff = w.linear(ff_gelu(config, w.linear("h", p + "ff_in")), p + "ff_out");
  return fmt::format(R"(
def encoder_block_{layer}(self, x: Tensor, key_bias: Tensor) -> Tensor:
{attention}    h = {h}
    return {out}
)",
                     fmt::arg("layer", layer),
                     fmt::arg("attention", attention_script(config, p, "x", w)), fmt::arg("h", h),
                     fmt::arg("out", w.layer_norm("(h + " + ff + ")", p + "ff_norm", config.dim,
                                                  config.layer_norm_eps)));
}

std::string embeddings(const ModelConfig& config, ScriptWriter& w) {
  const int64_t width = config.embedding_dim > 0 ? config.embedding_dim : config.dim;
  std::string x =
      fmt::format("{} + {}.narrow(0, {}, length).unsqueeze(0)", w.rows("embedding.weight", "ids"),
                  w.weight("positions.weight"), config.position_offset);
  if (config.token_types > 0) x += fmt::format(" + {}[0]", w.weight("token_types.weight"));
  x = w.layer_norm("(" + x + ")", "embedding_norm", width, config.layer_norm_eps);
  if (width != config.dim) x = w.linear(x, "embedding_project");
  return x;
}

std::string head(const ModelConfig& config, ScriptWriter& w) {
  const std::string dense = w.linear("pooled", "head");
  const std::string activated = config.head_activation == "tanh"   ? "torch.tanh(" + dense + ")"
                                : config.head_activation == "relu" ? "torch.relu(" + dense + ")"
                                                                   : "torch.gelu(" + dense + ")";
  return w.output(w.linear(activated, "output"));
}

// The masked-token head (models/masked_lm_head.h) as the body of a method whose `x` holds
// the states [batch, length, dim] in fp32: dense, exact GELU, LayerNorm, then scores against
// the input embedding table (tied) plus the head's bias per id: [batch, length, ids].
std::string masked_token_scores(const ModelConfig& config, ScriptWriter& w) {
  const int64_t width = config.embedding_dim > 0 ? config.embedding_dim : config.dim;
  // A bf16 export's forward gives fp32 states; its weights are bf16.
  const std::string cast = w.format() == WeightFormat::bf16
                               ? "    x = x.to(" + w.weight("mlm.dense.weight") + ".dtype)\n"
                               : "";
  return cast + "    h = torch.gelu(" + w.linear("x", "mlm.dense") + ")\n" +
         "    h = " + w.layer_norm("h", "mlm.norm", width, config.layer_norm_eps) + "\n" +
         "    return " +
         w.output(fmt::format("torch.linear(h, {}, {})", w.weight("embedding.weight"),
                              w.weight("mlm.bias"))) +
         "\n";
}

// Keys at padding get -inf: no state attends to them.
constexpr const char* kKeyBias =
    "torch.zeros([batch, 1, 1, length], dtype=x.dtype, device=ids.device).masked_fill("
    "torch.logical_not(valid).view(batch, 1, 1, length), float(\"-inf\"))";

// The encoder's layers over `x` as lines of a method body (each block model.layer_repeats
// times), and the block methods they call.
std::string encoder_blocks(const ModelConfig& config, ScriptWriter& w, std::string& methods) {
  std::string blocks;
  for (int64_t i = 0; i < config.layers; ++i) {
    for (int64_t r = 0; r < config.layer_repeats; ++r) {
      blocks += fmt::format("    x = self.encoder_block_{}(x, key_bias)\n", i);
    }
    methods += block_method(config, i, w);
  }
  if (config.pre_norm) {
    blocks +=
        "    x = " + w.layer_norm("x", "final_norm", config.dim, config.layer_norm_eps) + "\n";
  }
  return blocks;
}

}  // namespace

std::string bert_script(const ModelConfig& config, ScriptWriter& w) {
  std::string methods;
  const std::string blocks = encoder_blocks(config, w, methods);
  const std::string pooling = pooling_script(config.pooling);
  return methods + sequence_forward_start(config.max_positions - config.position_offset) +
         fmt::format(R"(    x = {embed}
    key_bias = {key_bias}
{blocks}{pooling}    return {out}

def predict_proba(self, ids: Tensor, lengths: Tensor) -> Tensor:
    return torch.softmax(self.forward(ids, lengths), 1)
)",
                     fmt::arg("embed", embeddings(config, w)), fmt::arg("key_bias", kKeyBias),
                     fmt::arg("blocks", blocks), fmt::arg("pooling", pooling),
                     fmt::arg("out", head(config, w)));
}

std::string bert_encoder_script(const ModelConfig& config, ScriptWriter& w) {
  std::string methods;
  const std::string blocks = encoder_blocks(config, w, methods);
  // Hugging Face's convention: attention_mask 1 for a real token, 0 for padding; ids beyond
  // model.max_positions are cut.
  return methods + fmt::format(R"(
def forward(self, ids: Tensor, attention_mask: Tensor) -> Tensor:
    if ids.size(1) > {max}:
        ids = ids.narrow(1, 0, {max})
        attention_mask = attention_mask.narrow(1, 0, {max})
    batch = ids.size(0)
    length = ids.size(1)
    valid = attention_mask.to(ids.device) > 0
    x = {embed}
    key_bias = {key_bias}
{blocks}    return {states}

def pooled(self, ids: Tensor, attention_mask: Tensor) -> Tensor:
    x = self.forward(ids, attention_mask)
    valid = attention_mask.narrow(1, 0, x.size(1)).to(ids.device) > 0
    lengths = valid.sum(1).clamp(1)
{pooling}    return pooled

def masked_token_scores(self, ids: Tensor, attention_mask: Tensor) -> Tensor:
    x = self.forward(ids, attention_mask)
{scores})",
                               fmt::arg("max", config.max_positions - config.position_offset),
                               fmt::arg("embed", embeddings(config, w)),
                               fmt::arg("key_bias", kKeyBias), fmt::arg("blocks", blocks),
                               fmt::arg("states", w.output("x")),
                               fmt::arg("pooling", pooling_script(config.pooling)),
                               fmt::arg("scores", masked_token_scores(config, w)));
}

}  // namespace sift
