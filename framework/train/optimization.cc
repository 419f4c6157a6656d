#include "framework/train/optimization.h"

#include <cmath>

#include "framework/train/adadelta.h"

namespace sift {

std::vector<torch::Tensor> trainable(const std::vector<torch::Tensor>& all) {
  std::vector<torch::Tensor> params;
  for (const auto& p : all) {
    if (p.requires_grad()) params.push_back(p);
  }
  return params;
}

namespace {

// The optimizer over `groups`, each with `defaults` but for its learning rate (scaled) and,
// for a group without decay, weight_decay 0.
template <class Optimizer, class Options>
std::unique_ptr<torch::optim::Optimizer> over_groups(const std::vector<ParamGroup>& groups,
                                                     const Options& defaults) {
  std::vector<torch::optim::OptimizerParamGroup> torch_groups;
  for (const auto& g : groups) {
    auto options = std::make_unique<Options>(defaults);
    options->lr(defaults.lr() * g.lr_scale);
    if (!g.decay) options->weight_decay(0.0);
    torch_groups.emplace_back(g.params, std::move(options));
  }
  return std::make_unique<Optimizer>(std::move(torch_groups), defaults);
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> create_optimizer(const OptimizerConfig& o,
                                                          const std::vector<ParamGroup>& groups) {
  namespace optim = torch::optim;
  switch (o.type) {
    case OptimizerType::adam:
      return over_groups<optim::Adam>(groups, optim::AdamOptions(o.lr)
                                                  .betas({o.beta1, o.beta2})
                                                  .eps(o.eps)
                                                  .weight_decay(o.weight_decay));
    case OptimizerType::adamw:
      return over_groups<optim::AdamW>(groups, optim::AdamWOptions(o.lr)
                                                   .betas({o.beta1, o.beta2})
                                                   .eps(o.eps)
                                                   .weight_decay(o.weight_decay));
    case OptimizerType::adagrad:
      return over_groups<optim::Adagrad>(
          groups, optim::AdagradOptions(o.lr).eps(o.eps).weight_decay(o.weight_decay));
    case OptimizerType::adadelta:
      return over_groups<Adadelta>(
          groups, AdadeltaOptions(o.lr).rho(o.rho).eps(o.eps).weight_decay(o.weight_decay));
    case OptimizerType::rmsprop:
      return over_groups<optim::RMSprop>(groups, optim::RMSpropOptions(o.lr)
                                                     .alpha(o.alpha)
                                                     .eps(o.eps)
                                                     .momentum(o.momentum)
                                                     .weight_decay(o.weight_decay));
    case OptimizerType::sgd:
      break;
  }
  return over_groups<optim::SGD>(groups, optim::SGDOptions(o.lr)
                                             .momentum(o.momentum)
                                             .nesterov(o.nesterov)
                                             .weight_decay(o.weight_decay));
}

std::unique_ptr<torch::optim::Optimizer> create_optimizer(const OptimizerConfig& o,
                                                          const std::vector<torch::Tensor>& all) {
  ParamGroup everything;
  everything.params = trainable(all);
  return create_optimizer(o, std::vector<ParamGroup>{everything});
}

void drop_gradients(torch::optim::Optimizer& optimizer) {
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) p.mutable_grad() = torch::Tensor();
  }
}

void zero_missing_gradients(torch::optim::Optimizer& optimizer) {
  torch::NoGradGuard no_grad;
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) {
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    }
  }
}

void set_lr(torch::optim::Optimizer& optimizer, double lr, const std::vector<double>& scales) {
  auto& groups = optimizer.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) {
    groups[i].options().set_lr(i < scales.size() ? lr * scales[i] : lr);
  }
}

}  // namespace sift
