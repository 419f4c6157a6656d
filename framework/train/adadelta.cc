#include "framework/train/adadelta.h"

#include <torch/optim/serialize.h>

namespace sift {

void AdadeltaOptions::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, lr);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, rho);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, eps);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, weight_decay);
}

void AdadeltaOptions::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(lr);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(rho);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(eps);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(weight_decay);
}

void AdadeltaParamState::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(int64_t, step);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, square_avg);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, acc_delta);
}

void AdadeltaParamState::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(step);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(square_avg);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(acc_delta);
}

Adadelta::Adadelta(std::vector<torch::optim::OptimizerParamGroup> groups, AdadeltaOptions defaults)
    : Optimizer(std::move(groups), std::make_unique<AdadeltaOptions>(defaults)) {}

torch::Tensor Adadelta::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const AdadeltaOptions&>(group.options());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto grad = p.grad().is_sparse() ? p.grad().to_dense() : p.grad();
      const auto key = c10::guts::to_string(p.unsafeGetTensorImpl());
      if (state_.find(key) == state_.end()) {
        auto fresh = std::make_unique<AdadeltaParamState>();
        fresh->square_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
        fresh->acc_delta(torch::zeros_like(p, at::MemoryFormat::Preserve));
        state_[key] = std::move(fresh);
      }
      auto& s = static_cast<AdadeltaParamState&>(*state_[key]);
      s.step(s.step() + 1);
      if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
      s.square_avg().mul_(o.rho()).addcmul_(grad, grad, 1 - o.rho());
      auto delta = s.acc_delta().add(o.eps()).sqrt_().div_(s.square_avg().add(o.eps()).sqrt_()).mul_(grad);
      s.acc_delta().mul_(o.rho()).addcmul_(delta, delta, 1 - o.rho());
      p.add_(delta, -o.lr());
    }
  }
  return loss;
}

void Adadelta::save(torch::serialize::OutputArchive& archive) const {
  torch::optim::serialize<AdadeltaParamState, AdadeltaOptions>(archive, *this);
}

void Adadelta::load(torch::serialize::InputArchive& archive) {
  torch::optim::serialize<AdadeltaParamState, AdadeltaOptions>(archive, *this);
}

}  // namespace sift
