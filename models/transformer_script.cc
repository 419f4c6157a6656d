// The Transformer as TorchScript: TransformerImpl::forward with one encoder_block call
// per layer (weights passed in), the same scaling constants and the same -inf key bias.
// Dropout is off at inference.
#include <fmt/format.h>

#include <cmath>

#include "models/script_writer.h"
#include "models/transformer.h"

namespace sift {

std::string sequence_forward_start(int64_t max_tokens) {
  return fmt::format(R"(
def forward(self, ids: Tensor, lengths: Tensor) -> Tensor:
    if ids.size(1) > {0}:
        ids = ids.narrow(1, 0, {0})
    batch = ids.size(0)
    length = ids.size(1)
    lengths = lengths.long().clamp(1, length).to(ids.device)
    valid = torch.arange(length, device=ids.device).unsqueeze(0) < lengths.unsqueeze(1)
)",
                     max_tokens);
}

std::string attention_script(const ModelConfig& config, const std::string& p,
                             const std::string& input, ScriptWriter& w) {
  const int64_t head_dim = config.dim / config.heads;
  // Heads left by structured pruning (train.prune): sift export removes pruned ones.
  const int64_t heads = w.tensor(p + "attention.in_proj.weight").size(0) / (3 * head_dim);
  const double query_scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  return fmt::format(
      R"(    batch = x.size(0)
    length = x.size(1)
    qkv = {qkv}.view(batch, length, 3, {heads}, {head_dim}).permute(2, 0, 3, 1, 4)
    q = qkv[0] * {qscale}
    scores = torch.matmul(q, qkv[1].transpose(-2, -1)) + key_bias
    weights = torch.softmax(scores, -1)
    attended = torch.matmul(weights, qkv[2]).transpose(1, 2).reshape(batch, length, {width})
)",
      fmt::arg("qkv", w.linear(input, p + "attention.in_proj")), fmt::arg("heads", heads),
      fmt::arg("head_dim", head_dim), fmt::arg("width", heads * head_dim),
      fmt::arg("qscale", script_number(query_scale)));
}

// One method per encoder layer over its own attributes (its Linear layers may be packed
// int8 objects, which a shared method would need typed arguments for).
std::string pre_norm_block_method(
    const ModelConfig& config, int64_t layer, ScriptWriter& w, double eps,
    const std::function<std::string(const std::string&)>& activation) {
  const std::string p = fmt::format("layers.{}.", layer);
  const std::string normed = w.layer_norm("x", p + "attention_norm", config.dim, eps);
  const std::string ff_normed = w.layer_norm("h", p + "ff_norm", config.dim, eps);
  return fmt::format(
      R"(
def encoder_block_{layer}(self, x: Tensor, key_bias: Tensor) -> Tensor:
{attention}    h = x + {out}
    ff = {ff}
    return h + ff
)",
      fmt::arg("layer", layer), fmt::arg("attention", attention_script(config, p, normed, w)),
      fmt::arg("out", w.linear("attended", p + "attention.out_proj")),
      fmt::arg("ff", w.linear(activation(w.linear(ff_normed, p + "ff_in")), p + "ff_out")));
}

std::string pooling_script(const std::string& kind) {
  if (kind == "cls") return "    pooled = x.select(1, 0)\n";
  if (kind == "mean") {
    return "    pooled = (x * valid.unsqueeze(2).to(x.dtype)).sum(1) / "
           "lengths.unsqueeze(1).to(x.dtype)\n";
  }
  return "    pooled = torch.max(x.masked_fill(torch.logical_not(valid).unsqueeze(2), "
         "float(\"-inf\")), 1)[0]\n";
}

std::string transformer_script(const ModelConfig& config, ScriptWriter& w) {
  const int64_t dim = config.dim;
  const bool cls = config.pooling == "cls";
  std::string prefix;
  if (cls) {
    prefix = fmt::format(
        "    x = torch.cat([{0}.view(1, 1, {1}).expand(batch, 1, {1}).to(x.dtype), x], 1)\n"
        "    key_valid = torch.cat([valid.new_ones([batch, 1]), "
        "valid], 1)\n",
        w.weight("cls"), dim);
  }
  const std::string positions =
      w.has("positions.weight") ? w.weight("positions.weight") : w.weight("sinusoidal_positions");
  std::string blocks, methods;
  for (int64_t i = 0; i < config.layers; ++i) {
    blocks += fmt::format("    x = self.encoder_block_{}(x, key_bias)\n", i);
    methods += pre_norm_block_method(
        config, i, w, 1e-5, [](const std::string& x) { return fmt::format("torch.gelu({})", x); });
  }
  return methods + sequence_forward_start(config.max_positions) +
         fmt::format(R"(    x = {embed} * {xscale}
    key_valid = valid
{prefix}    total = length + {first}
    x = x + {positions}.narrow(0, 0, total).unsqueeze(0)
    key_bias = torch.zeros([batch, 1, 1, total], dtype=x.dtype, device=ids.device).masked_fill(torch.logical_not(key_valid).view(batch, 1, 1, total), float("-inf"))
{blocks}    x = {final_norm}
{pooling}    return {out}

def predict_proba(self, ids: Tensor, lengths: Tensor) -> Tensor:
    return torch.softmax(self.forward(ids, lengths), 1)
)",
                     fmt::arg("dim", dim), fmt::arg("embed", w.rows("embedding.weight", "ids")),
                     fmt::arg("xscale", script_number(std::sqrt(static_cast<double>(dim)))),
                     fmt::arg("prefix", prefix), fmt::arg("first", cls ? 1 : 0),
                     fmt::arg("positions", positions), fmt::arg("blocks", blocks),
                     fmt::arg("final_norm", w.layer_norm("x", "final_norm", dim)),
                     fmt::arg("pooling", pooling_script(config.pooling)),
                     fmt::arg("out", w.output(w.linear("pooled", "output"))));
}

}  // namespace sift
