// Which runs the fused SGD loop computes exactly (fast_path.h): the rules on the options,
// without LibTorch, so that the torch-free trainer (lite_trainer.h) takes the runs the
// LibTorch trainer would put on its fast path, and no other.
#pragma once

#include <string>

#include "config/config.h"

namespace sift {

// What the rules need besides train.*.
struct FastPathCase {
  std::string model_type;
  bool fused_step = false;  // model_type has one (models/base/fused_sgd.h)
  bool multi_label = false;
  bool loss_scaling = false;  // train.loss_scaling is on (precision.h)
  std::string device;         // "" or "cpu": the CPU
  bool distributed = false;   // a process group of more than one
};

// Why such a run cannot take the fused loop (the first reason found), or "" when it can.
std::string fast_path_refusal(const TrainConfig& t, const FastPathCase& c);

// The case of a config before its run starts: the model's traits say whether it has a fused
// step, and the environment's WORLD_SIZE whether the run is distributed.
FastPathCase fast_path_case(const SiftConfig& config);

}  // namespace sift
