// Evaluation of a LibTorch model over a batch stream (evaluation_result.h: what it counts).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "datasets/sharded_stream.h"
#include "framework/runtime/base/evaluation_result.h"
#include "models/model.h"

namespace sift {

// Evaluation with every rank in step, batch by batch (run.shard: parameters: each layer
// of a forward is gathered from every rank): `any` (collective) says whether some rank
// still has a batch, given whether this one has; a rank without one runs `idle` (the
// forward's collectives) while the others evaluate theirs.
struct Lockstep {
  std::function<bool(bool mine)> any;
  std::function<void()> idle;
};

// A stream's batches, in lockstep with the other ranks when `lockstep` is given.
class LockstepBatches {
 public:
  LockstepBatches(ShardedStream& stream, const Lockstep* lockstep)
      : stream_(stream), lockstep_(lockstep) {}
  // The next batch, true while any rank has one (a rank without one idles in between).
  bool next(RawBatch& batch);
  // A batch that runs no forward takes part in the others' all the same.
  void idle() const {
    if (lockstep_) lockstep_->idle();
  }

 private:
  ShardedStream& stream_;
  const Lockstep* lockstep_;
  bool ended_ = false;
};

// Runs the model in eval mode over one pass of `batches`. `confused` (single-label, with
// batches that carry their texts: StreamOptions::keep_text) keeps a few misclassified texts.
Evaluation evaluate(Classifier& model, ShardedStream& batches, InputKind kind, int64_t classes,
                    torch::Device device, LabelMode mode = {}, ConfusedExamples* confused = nullptr,
                    const Lockstep* lockstep = nullptr);

}  // namespace sift
