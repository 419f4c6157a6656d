#include "framework/train/optimization.h"

#include <cmath>

#include "framework/train/adadelta.h"

namespace sift {

std::unique_ptr<torch::optim::Optimizer> create_optimizer(const OptimizerConfig& o,
                                                          const std::vector<torch::Tensor>& all) {
  std::vector<torch::Tensor> params;
  for (const auto& p : all) {
    if (p.requires_grad()) params.push_back(p);
  }
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

double scheduled_lr(const TrainConfig& config, int64_t step, int64_t total_steps) {
  const auto& s = config.scheduler;
  const double lr = config.optimizer.lr;
  if (s.type == SchedulerType::constant || total_steps <= 0) return lr;
  const double floor = lr * s.final_lr_ratio;
  int64_t warmup = 0;
  if (s.type != SchedulerType::linear) {
    warmup = s.warmup_steps > 0 ? s.warmup_steps
                                : static_cast<int64_t>(s.warmup_ratio * static_cast<double>(total_steps));
  }
  if (step < warmup) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  const double progress =
      std::min(1.0, static_cast<double>(step - warmup) /
                        static_cast<double>(std::max<int64_t>(total_steps - warmup, 1)));
  if (s.type == SchedulerType::warmup_cosine) {
    return floor + (lr - floor) * 0.5 * (1.0 + std::cos(M_PI * progress));
  }
  return lr - (lr - floor) * progress;  // linear and warmup_linear
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace sift
