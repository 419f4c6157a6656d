// Which blocks gradient checkpointing (train.gradient_checkpointing) re-runs in backward:
// the policy alone, torch-free, so that a run's plan names it without LibTorch
// (framework/train/base/run_plan.h); models/recompute.h re-runs the blocks.
#pragma once

#include <cstdint>

#include "config/enums.h"

namespace sift {

class BlockShards;  // models/recompute.h

// Which of a model's blocks (Transformer layers, RNN layers, CNN filter widths) are
// recomputed: none (every = 0), all (1), or one in `every` (blocks 0, k, 2k, ...). With
// `shards` (run.shard: parameters, set by the trainer) every block is gathered before it
// runs and freed after, and recomputed in backward whatever `every` says.
struct RecomputePolicy {
  int64_t every = 0;
  BlockShards* shards = nullptr;
  bool applies(int64_t block) const { return every > 0 && block % every == 0; }
};

// From train.gradient_checkpointing and train.gradient_checkpointing_every.
RecomputePolicy recompute_policy(GradientCheckpointing mode, int64_t every);

}  // namespace sift
