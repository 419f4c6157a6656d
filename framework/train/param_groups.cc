#include "framework/train/param_groups.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "core/error.h"

namespace sift {
namespace {

// The full names of every LayerNorm's parameters ("layers.0.ff_norm.weight").
std::set<std::string> layer_norm_parameters(const torch::nn::Module& model) {
  std::set<std::string> names;
  for (const auto& m : model.named_modules()) {
    if (!m.value()->as<torch::nn::LayerNorm>()) continue;
    for (const auto& p : m.value()->named_parameters(/*recurse=*/false)) {
      names.insert(m.key().empty() ? p.key() : m.key() + "." + p.key());
    }
  }
  return names;
}

bool is_bias(const std::string& name) {
  return name == "bias" || (name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0);
}

}  // namespace

std::vector<ParamGroup> param_groups(const ClassifierImpl& model, const OptimizerConfig& o) {
  const bool by_layer = o.layer_decay < 1.0;
  const bool by_decay = o.type == OptimizerType::adamw && o.weight_decay > 0.0;
  if (by_layer && model.layer_count() < 1) {
    throw Error(fmt::format(
        "train.optimizer.layer_decay: {} decays the learning rate layer by layer, and this "
        "model has no stack of layers (model.type bert or transformer has); leave it at 1",
        o.layer_decay));
  }
  const std::set<std::string> norms =
      by_decay ? layer_norm_parameters(model) : std::set<std::string>{};
  const int64_t top = model.layer_count() + 1;
  std::vector<ParamGroup> groups;
  std::map<std::pair<int64_t, bool>, size_t> index;  // (depth, decay) -> group
  for (const auto& p : model.named_parameters()) {
    if (!p.value().requires_grad()) continue;
    const int64_t depth = by_layer ? model.depth_of(p.key()) : top;
    const bool decay = !by_decay || !(is_bias(p.key()) || norms.count(p.key()));
    const auto key = std::make_pair(depth, decay);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, groups.size()).first;
      ParamGroup g;
      g.lr_scale = std::pow(o.layer_decay, static_cast<double>(top - depth));
      g.decay = decay;
      g.name = fmt::format("{}{}", by_layer ? fmt::format("depth {}", depth) : "all",
                           decay ? "" : ", no decay");
      groups.push_back(std::move(g));
    }
    groups[it->second].params.push_back(p.value());
  }
  if (groups.empty()) groups.emplace_back();  // everything frozen: one empty group, as before
  return groups;
}

std::vector<double> lr_scales(const std::vector<ParamGroup>& groups) {
  std::vector<double> scales;
  for (const auto& g : groups) scales.push_back(g.lr_scale);
  return scales;
}

}  // namespace sift
