// The optimizer and learning-rate schedule a config asks for.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "config/config.h"

namespace sift {

// train.optimizer over the parameters that require gradients (frozen ones are left out).
std::unique_ptr<torch::optim::Optimizer> create_optimizer(const OptimizerConfig& optimizer,
                                                          const std::vector<torch::Tensor>& params);

// The learning rate at optimizer step `step` (0-based) of `total_steps`:
// constant; linear decay to final_lr_ratio x lr; or a linear warm-up over warmup_steps
// (or warmup_ratio x total) followed by linear or cosine decay.
double scheduled_lr(const TrainConfig& config, int64_t step, int64_t total_steps);

void set_lr(torch::optim::Optimizer& optimizer, double lr);

}  // namespace sift
