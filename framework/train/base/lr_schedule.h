// The learning-rate schedule a config asks for (torch-free: the torch-free trainer's too).
#pragma once

#include <cstdint>

#include "config/config.h"

namespace sift {

// The learning rate at optimizer step `step` (0-based) of `total_steps`:
// constant; linear decay to final_lr_ratio x lr; or a linear warm-up over warmup_steps
// (or warmup_ratio x total) followed by linear or cosine decay.
double scheduled_lr(const TrainConfig& config, int64_t step, int64_t total_steps);

}  // namespace sift
