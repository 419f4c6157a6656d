// The options of one training run, each part resolved once from the config by
// resolve_run: first every check between options (config/validate), then the data plan,
// the loss, the label mode, the precision and the process group. Below the start of a
// run nothing reads the SiftConfig again; it is kept only to be written out.
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "config/config.h"
#include "framework/runtime/base/data_plan.h"
#include "framework/runtime/evaluation.h"
#include "framework/runtime/loss.h"
#include "framework/train/distributed.h"
#include "framework/train/precision.h"
#include "models/recompute.h"

namespace sift {

// train.precision, train.gradient_checkpointing* and train.loss_scaling*.
struct PrecisionPlan {
  Precision autocast = Precision::fp32;
  RecomputePolicy recompute;
  bool loss_scaling = false;  // on: fp16 by default (loss_scaling_enabled)
  LossScalerOptions scaler;

  LossScaler make_scaler() const { return loss_scaling ? LossScaler(scaler) : LossScaler(); }
};

struct RunPlan {
  SiftConfig given;  // as loaded: written to config.yaml and the report, never read for options
  DataPlan data;
  ModelConfig model;
  // The loop's own options: epochs, steps, validation, saving, stopping, the optimizer
  // and its schedule, distillation and pruning.
  TrainConfig train;
  LossOptions loss;  // class weights are added once the task is known (setup.cc)
  LabelMode labels;  // evaluation: single- or multi-label, the threshold
  PrecisionPlan precision;
  DistributedOptions distributed;
  int64_t threads = 0;  // run.threads: 0 is all cores
  std::string thread_split;  // run.threads 0 on the fast path: its cores' split (thread_split.h)
  torch::Device device{torch::kCPU};
  uint64_t seed = 0;
};

RunPlan resolve_run(const SiftConfig& config);

// The options a node may set for itself in a group: run.threads, run.device, data.workers
// and run.dist_timeout_seconds.
bool node_option(const std::string& key);

// The options every rank of a group must share, as "key=value" lines: all but the node's
// own (node_option) and rank 0's alone (run.overwrite*).
std::string agreed_options(const SiftConfig& config);

}  // namespace sift
