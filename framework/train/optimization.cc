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

std::unique_ptr<torch::optim::Optimizer> create_optimizer(const OptimizerConfig& o,
                                                          const std::vector<torch::Tensor>& all) {
  const std::vector<torch::Tensor> params = trainable(all);
  if (o.type == OptimizerType::adam) {
    return std::make_unique<torch::optim::Adam>(
        params, torch::optim::AdamOptions(o.lr).betas({o.beta1, o.beta2}).eps(o.eps).weight_decay(
                    o.weight_decay));
  }
  if (o.type == OptimizerType::adamw) {
    return std::make_unique<torch::optim::AdamW>(
        params, torch::optim::AdamWOptions(o.lr).betas({o.beta1, o.beta2}).eps(o.eps).weight_decay(
                    o.weight_decay));
  }
  if (o.type == OptimizerType::adagrad) {
    return std::make_unique<torch::optim::Adagrad>(
        params, torch::optim::AdagradOptions(o.lr).eps(o.eps).weight_decay(o.weight_decay));
  }
  if (o.type == OptimizerType::adadelta) {
    return std::make_unique<Adadelta>(
        params, AdadeltaOptions(o.lr).rho(o.rho).eps(o.eps).weight_decay(o.weight_decay));
  }
  if (o.type == OptimizerType::rmsprop) {
    return std::make_unique<torch::optim::RMSprop>(
        params, torch::optim::RMSpropOptions(o.lr)
                    .alpha(o.alpha)
                    .eps(o.eps)
                    .momentum(o.momentum)
                    .weight_decay(o.weight_decay));
  }
  return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(o.lr)
                                                         .momentum(o.momentum)
                                                         .nesterov(o.nesterov)
                                                         .weight_decay(o.weight_decay));
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace sift
