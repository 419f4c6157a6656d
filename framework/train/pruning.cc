#include "framework/train/pruning.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace sift {
namespace {

// Buffer names cannot hold dots.
std::string buffer_name(const std::string& kind, const std::string& name) {
  std::string out = kind + ":" + name;
  std::replace(out.begin(), out.end(), '.', '_');
  return out;
}

// `keep` (1 everywhere) with the `count` entries of smallest `score` set to 0; ties go
// to the lower index, so the masks are the same on every run and rank.
void keep_largest(torch::Tensor& keep, const torch::Tensor& score, int64_t count) {
  auto flat = torch::ones({score.numel()}, torch::kFloat32);
  if (count > 0) {
    const auto order = std::get<1>(score.reshape({-1}).sort(/*stable=*/true, 0, false));
    flat.index_fill_(0, order.narrow(0, 0, count), 0.0);
  }
  keep.copy_(flat.view(keep.sizes()));
}

// Zeros the rows of a sparse gradient (of an embedding table) whose rows are masked.
void mask_sparse_rows(torch::Tensor& grad, const torch::Tensor& keep) {
  auto values = grad._values();
  auto factor = keep.index_select(0, grad._indices()[0]);  // [nnz] or [nnz, dim]
  while (factor.dim() < values.dim()) factor = factor.unsqueeze(-1);
  values.mul_(factor.to(values.scalar_type()));
}

}  // namespace

double scheduled_sparsity(const PruneConfig& config, int64_t step) {
  if (step < config.start_step) return 0.0;
  if (step >= config.end_step) return config.sparsity;
  const double done = static_cast<double>(step - config.start_step) /
                      static_cast<double>(config.end_step - config.start_step);
  return config.sparsity * (1.0 - std::pow(1.0 - done, 3));
}

Pruner::Pruner(const PruneConfig& prune, const OptimizerConfig& o, const ModelConfig& config,
               ClassifierImpl& model)
    : config_(prune) {
  for (const auto& p : model.named_parameters()) params_[p.key()] = p.value();
  sparse_rows_stay_ = o.type == OptimizerType::sgd && o.momentum == 0 && o.weight_decay == 0;
  const ModelSpec& spec = find_model(config.type);
  const auto options = torch::TensorOptions().device(params_.begin()->second.device());
  for (const PruneStructure s : config_.structure) {
    if (s == PruneStructure::unstructured || !spec.prune_units) continue;
    for (auto& g : spec.prune_units(config, s, params_)) {
      auto keep = masks_.register_buffer(buffer_name(to_string(s), g.name),
                                         torch::ones({g.units}, options));
      structured_.push_back({std::move(g), keep});
    }
  }
  for (const auto& pattern : config_.params) {
    bool matched = false;
    for (const auto& [name, p] : params_) {
      if (fnmatch(pattern.c_str(), name.c_str(), 0) != 0) continue;
      matched = true;
      auto keep = masks_.register_buffer(buffer_name("unstructured", name),
                                         torch::ones(p.sizes(), options));
      unstructured_.push_back({name, keep});
    }
    if (!matched) {
      throw Error(fmt::format("train.prune.params: '{}' matches no parameter of the {} model",
                              pattern, config.type));
    }
  }
}

TensorMap Pruner::gradients() const {
  TensorMap grads;
  for (const auto& [name, p] : params_) {
    if (p.grad().defined()) grads[name] = p.grad();
  }
  return grads;
}

void Pruner::mask_gradients() {
  torch::NoGradGuard no_grad;
  const TensorMap grads = gradients();
  for (const auto& s : structured_) {
    mask_units(grads, s.group, s.keep);  // dense ones
    if (!s.group.lookup) continue;
    auto it = grads.find(s.group.slices.at(0).param);
    if (it != grads.end() && it->second.is_sparse()) {
      torch::Tensor g = it->second;
      mask_sparse_rows(g, s.keep);
    }
  }
  for (const auto& u : unstructured_) {
    auto it = grads.find(u.param);
    if (it == grads.end()) continue;
    torch::Tensor g = it->second;
    if (g.is_sparse()) {
      mask_sparse_rows(g, u.keep);
    } else {
      g.mul_(u.keep);
    }
  }
}

void Pruner::apply() {
  torch::NoGradGuard no_grad;
  for (const auto& s : structured_) {
    const auto& table = params_.at(s.group.slices.at(0).param);
    if (s.group.lookup && sparse_rows_stay_ && table.grad().defined() && table.grad().is_sparse()) {
      continue;
    }
    mask_units(params_, s.group, s.keep);
  }
  for (const auto& u : unstructured_) {
    const auto& p = params_.at(u.param);
    if (sparse_rows_stay_ && p.grad().defined() && p.grad().is_sparse()) continue;
    p.mul_(u.keep);
  }
}

void Pruner::update(int64_t step) {
  const auto& c = config_;
  if (step < c.start_step || step > c.end_step) return;
  if ((step - c.start_step) % c.every != 0 && step != c.end_step) return;
  const double sparsity = scheduled_sparsity(c, step);
  torch::NoGradGuard no_grad;
  for (auto& s : structured_) {
    const auto count = static_cast<int64_t>(std::floor(sparsity * double(s.group.units)));
    keep_largest(s.keep, unit_norms(params_, s.group), count);
    mask_units(params_, s.group, s.keep);
  }
  for (auto& u : unstructured_) {
    torch::Tensor p = params_.at(u.param);
    const auto count = static_cast<int64_t>(std::floor(sparsity * double(p.numel())));
    keep_largest(u.keep, p.detach().abs().to(torch::kCPU), count);
    p.mul_(u.keep);
  }
}

NamedTensors Pruner::masks() const { return named_tensors(masks_); }

void Pruner::load(const std::string& bytes, const std::string& path) {
  load_module_bytes(masks_, bytes, path);
}

nlohmann::json Pruner::report() const {
  nlohmann::json groups = nlohmann::json::object(), params = nlohmann::json::object();
  for (const auto& s : structured_) {
    const auto kept = s.keep.sum().item<int64_t>();
    groups[s.group.name] = {{"units", s.group.units}, {"pruned", s.group.units - kept}};
    for (const auto& slice : s.group.slices) params[slice.param] = nullptr;
  }
  for (const auto& u : unstructured_) params[u.param] = nullptr;
  for (auto it = params.begin(); it != params.end(); ++it) {
    const auto& p = params_.at(it.key());
    const int64_t zeros = (p.detach() == 0).sum().item<int64_t>();
    *it = {{"weights", p.numel()},
           {"zeros", zeros},
           {"sparsity", static_cast<double>(zeros) / static_cast<double>(p.numel())}};
  }
  std::vector<std::string> structures;
  for (const PruneStructure s : config_.structure) structures.push_back(to_string(s));
  return {{"structure", structures},
          {"target_sparsity", config_.sparsity},
          {"end_step", config_.end_step},
          {"groups", groups},
          {"parameters", params}};
}

std::string Pruner::report_text() const {
  std::map<std::string, std::pair<int64_t, int64_t>> units;  // structure: pruned, all
  for (size_t i = 0; i < structured_.size(); ++i) {
    const auto& s = structured_[i];
    const std::string kind = s.group.name.substr(s.group.name.rfind('.') + 1);
    units[kind].first += s.group.units - s.keep.sum().item<int64_t>();
    units[kind].second += s.group.units;
  }
  std::string text = fmt::format("Pruning (target sparsity {}):\n", config_.sparsity);
  for (const auto& [kind, n] : units) {
    text += fmt::format("  {}: {} of {} units pruned ({:.1f}%); sift export removes them\n", kind,
                        n.first, n.second, 100.0 * double(n.first) / double(n.second));
  }
  for (const auto& u : unstructured_) {
    const auto& p = params_.at(u.param);
    const int64_t zeros = (p.detach() == 0).sum().item<int64_t>();
    text += fmt::format("  {}: {} of {} weights zero ({:.1f}%)\n", u.param, zeros, p.numel(),
                        100.0 * double(zeros) / double(p.numel()));
  }
  if (!unstructured_.empty()) {
    text += "  (zero weights shrink a compressed file; dense products take as long as before)\n";
  }
  return text + "\n";
}

}  // namespace sift
