// The Transformer as TorchScript: TransformerImpl::forward with one encoder_block call
// per layer (weights passed in), the same scaling constants and the same -inf key bias.
// Dropout is off at inference.
#include <fmt/format.h>

#include <cmath>

#include "models/script_writer.h"
#include "models/transformer.h"

namespace sift {
namespace {

std::string block_call(int64_t layer, ScriptWriter& w) {
  const std::string p = fmt::format("layers.{}.", layer);
  std::vector<std::string> args;
  for (const char* name :
       {"attention_norm.weight", "attention_norm.bias", "attention.in_proj.weight",
        "attention.in_proj.bias", "attention.out_proj.weight", "attention.out_proj.bias",
        "ff_norm.weight", "ff_norm.bias", "ff_in.weight", "ff_in.bias", "ff_out.weight",
        "ff_out.bias"}) {
    args.push_back(w.weight(p + name));
  }
  return fmt::format("    x = self.encoder_block(x, key_bias, {})\n", fmt::join(args, ", "));
}

std::string pooling(const std::string& kind) {
  if (kind == "cls") return "    pooled = x.select(1, 0)\n";
  if (kind == "mean") {
    return "    pooled = (x * valid.unsqueeze(2).to(x.dtype)).sum(1) / "
           "lengths.unsqueeze(1).to(x.dtype)\n";
  }
  return "    pooled = torch.max(x.masked_fill(torch.logical_not(valid).unsqueeze(2), "
         "float(\"-inf\")), 1)[0]\n";
}

}  // namespace

std::string transformer_script(const ModelConfig& config, ScriptWriter& w) {
  const int64_t dim = config.dim;
  const int64_t head_dim = dim / config.heads;
  const double query_scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
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
  std::string blocks;
  for (int64_t i = 0; i < config.layers; ++i) blocks += block_call(i, w);
  return fmt::format(R"(
def encoder_block(self, x: Tensor, key_bias: Tensor, n1w: Tensor, n1b: Tensor, inw: Tensor, inb: Tensor, outw: Tensor, outb: Tensor, n2w: Tensor, n2b: Tensor, f1w: Tensor, f1b: Tensor, f2w: Tensor, f2b: Tensor) -> Tensor:
    batch = x.size(0)
    length = x.size(1)
    qkv = torch.linear(torch.layer_norm(x, [{dim}], n1w, n1b, 1e-05), inw, inb).view(batch, length, 3, {heads}, {head_dim}).permute(2, 0, 3, 1, 4)
    q = qkv[0] * {qscale}
    scores = torch.matmul(q, qkv[1].transpose(-2, -1)) + key_bias
    weights = torch.softmax(scores, -1)
    attended = torch.matmul(weights, qkv[2]).transpose(1, 2).reshape(batch, length, {dim})
    h = x + torch.linear(attended, outw, outb)
    ff = torch.linear(torch.gelu(torch.linear(torch.layer_norm(h, [{dim}], n2w, n2b, 1e-05), f1w, f1b)), f2w, f2b)
    return h + ff

def forward(self, ids: Tensor, lengths: Tensor) -> Tensor:
    if ids.size(1) > {max_tokens}:
        ids = ids.narrow(1, 0, {max_tokens})
    batch = ids.size(0)
    length = ids.size(1)
    lengths = lengths.long().clamp(1, length).to(ids.device)
    valid = torch.arange(length, device=ids.device).unsqueeze(0) < lengths.unsqueeze(1)
    x = {embed} * {xscale}
    key_valid = valid
{prefix}    total = length + {first}
    x = x + {positions}.narrow(0, 0, total).unsqueeze(0)
    key_bias = torch.zeros([batch, 1, 1, total], dtype=x.dtype, device=ids.device).masked_fill(torch.logical_not(key_valid).view(batch, 1, 1, total), float("-inf"))
{blocks}    x = torch.layer_norm(x, [{dim}], {fnw}, {fnb}, 1e-05)
{pooling}    return torch.linear(pooled, {ow}, {ob})

def predict_proba(self, ids: Tensor, lengths: Tensor) -> Tensor:
    return torch.softmax(self.forward(ids, lengths), 1)
)",
                     fmt::arg("dim", dim), fmt::arg("heads", config.heads),
                     fmt::arg("head_dim", head_dim),
                     fmt::arg("qscale", script_number(query_scale)),
                     fmt::arg("max_tokens", config.max_positions),
                     fmt::arg("embed", w.rows("embedding.weight", "ids")),
                     fmt::arg("xscale", script_number(std::sqrt(static_cast<double>(dim)))),
                     fmt::arg("prefix", prefix), fmt::arg("first", cls ? 1 : 0),
                     fmt::arg("positions", positions), fmt::arg("blocks", blocks),
                     fmt::arg("fnw", w.weight("final_norm.weight")),
                     fmt::arg("fnb", w.weight("final_norm.bias")),
                     fmt::arg("pooling", pooling(config.pooling)),
                     fmt::arg("ow", w.weight("output.weight")),
                     fmt::arg("ob", w.weight("output.bias")));
}

}  // namespace sift
