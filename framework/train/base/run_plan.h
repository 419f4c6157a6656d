// The options of one training run, each part resolved once from the config by
// resolve_run: first every check between options (config/validate), then the data plan,
// the loss, the label mode, the precision and the process group. Below the start of a
// run nothing reads the SiftConfig again; it is kept only to be written out. Torch-free:
// the sift program decides with it whether it trains a config itself or hands it to
// sift-main, and both programs resolve a config through it.
#pragma once

#include <cstdint>
#include <string>

#include "config/config.h"
#include "framework/runtime/base/data_plan.h"
#include "framework/runtime/base/evaluation_result.h"
#include "framework/runtime/base/loss_options.h"
#include "framework/train/base/distributed_options.h"
#include "models/base/recompute_policy.h"

namespace sift {

// train.precision, train.gradient_checkpointing* and train.loss_scaling* (precision.h
// scales the loss).
struct LossScalerOptions {
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;  // clean steps before the scale grows
};

struct PrecisionPlan {
  Precision autocast = Precision::fp32;
  RecomputePolicy recompute;
  bool loss_scaling = false;  // on: fp16 by default (loss_scaling_enabled)
  LossScalerOptions scaler;
};

// Whether train.loss_scaling turns loss scaling on for `precision`: auto scales fp16 only.
bool loss_scaling_enabled(LossScaling loss_scaling, Precision precision);

struct RunPlan {
  SiftConfig given;  // as loaded: written to config.yaml and the report, never read for options
  DataPlan data;
  ModelConfig model;
  // The loop's own options: epochs, steps, validation, saving, stopping, the optimizer
  // and its schedule, distillation and pruning.
  TrainConfig train;
  LossOptions loss;  // class weights come with the task (setup.cc)
  LabelMode labels;  // evaluation: single- or multi-label, the threshold
  PrecisionPlan precision;
  DistributedOptions distributed;
  int64_t threads = 0;       // run.threads: 0 is all cores
  std::string thread_split;  // run.threads 0 on the fast path: its cores' split (thread_split.h)
  // Why the run does not take the fused fast path ("": it does; fast_path_rules.h).
  std::string fast_path_refusal;
  std::string device = "cpu";  // run.device (framework/runtime/device.h parses it)
  uint64_t seed = 0;
};

RunPlan resolve_run(const SiftConfig& config);

// A training run's plan, as both programs start one: run.threads 0's split of the cores
// (apply_core_split, thread_split.h), then resolve_run, which checks the config once.
RunPlan plan_training(const SiftConfig& config);

// The options a node may set for itself in a group: run.threads, run.device, data.workers
// and run.dist_timeout_seconds.
bool node_option(const std::string& key);

// The options every rank of a group must share, as "key=value" lines: all but the node's
// own (node_option) and rank 0's alone (run.overwrite*).
std::string agreed_options(const SiftConfig& config);

}  // namespace sift
