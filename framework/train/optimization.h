// The optimizer a config asks for, and its learning rate (lr_schedule.h).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "config/config.h"
#include "framework/train/base/lr_schedule.h"
#include "framework/train/param_groups.h"

namespace sift {

// The parameters that require gradients, in their order: what the optimizer steps.
std::vector<torch::Tensor> trainable(const std::vector<torch::Tensor>& params);

// train.optimizer over `groups` (param_groups.h), each with its share of the learning rate
// and, without decay, weight_decay 0.
std::unique_ptr<torch::optim::Optimizer> create_optimizer(const OptimizerConfig& optimizer,
                                                          const std::vector<ParamGroup>& groups);
// The same over the parameters that require gradients (frozen ones are left out), one group.
std::unique_ptr<torch::optim::Optimizer> create_optimizer(const OptimizerConfig& optimizer,
                                                          const std::vector<torch::Tensor>& params);

// Drops the gradients of the optimizer's parameters, as PyTorch's
// zero_grad(set_to_none=True): LibTorch 1.13's Optimizer::zero_grad() zeroes them, so every
// step wrote zeros over them and the next backward added its gradients to those zeros
// (fine-tuning BERT-Mini: 11M gradients, about 20 ms of a 1.3 s step; bench/finetune_hf.py).
void drop_gradients(torch::optim::Optimizer& optimizer);
// Zeros for the optimizer's parameters that the backward since drop_gradients did not
// reach (a classifier head under masked-token pretraining): they step as under zero_grad()
// (weight decay, momentum), so the weights are the same bytes either way.
void zero_missing_gradients(torch::optim::Optimizer& optimizer);

// The scheduled rate `lr` into each group, times its scale (lr_scales; none: 1).
void set_lr(torch::optim::Optimizer& optimizer, double lr, const std::vector<double>& scales = {});

}  // namespace sift
