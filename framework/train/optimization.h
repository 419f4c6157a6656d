// The optimizer a config asks for, and its learning rate (lr_schedule.h).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "config/config.h"
#include "framework/train/lr_schedule.h"

namespace sift {

// The parameters that require gradients, in their order: what the optimizer steps.
std::vector<torch::Tensor> trainable(const std::vector<torch::Tensor>& params);

// train.optimizer over the parameters that require gradients (frozen ones are left out).
std::unique_ptr<torch::optim::Optimizer> create_optimizer(const OptimizerConfig& optimizer,
                                                          const std::vector<torch::Tensor>& params);

void set_lr(torch::optim::Optimizer& optimizer, double lr);

}  // namespace sift
