// How a distributed run's processes join and talk (run.dist_*, run.shard, train.bucket_mb),
// torch-free so that a run's plan holds it (run_plan.h); framework/train/distributed.h
// joins the group.
#pragma once

#include <chrono>
#include <string>

#include "config/enums.h"

namespace sift {

struct DistributedOptions {
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
  std::string backend = "auto";         // auto, gloo, nccl
  double bucket_mb = 25.0;              // dense gradients per all-reduce
  ShardStage shard = ShardStage::none;  // run.shard (sharding.h)
  std::string device = "cpu";           // run.device: nccl for a CUDA one under auto
  // "key=value" lines of the options every rank must share (agreed_options, run_plan.h):
  // compared at the rendezvous, so a node started with another config is refused there.
  std::string agreed_options;
};

}  // namespace sift
