// Hogwild training on the fast path (train.fast_path_threads > 1), as fastText trains:
// each thread reads its own part of the training data (its own stream, one reader) and
// takes fused SGD steps on the shared weights without locks. Threads may overwrite each
// other's updates of a row, and which thread reaches which step depends on timing, so
// such runs are neither deterministic nor bit-exact on resume; last.ckpt is written at
// epoch ends only (a run stopped inside an epoch resumes at the next epoch). No LibTorch:
// The training loop (train_loop.h) runs it for either learner.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "datasets/text_encoder.h"
#include "framework/train/base/progress.h"
#include "framework/train/base/train_loop.h"
#include "models/base/fused_sgd.h"

namespace sift {

// What the epoch loop tells the threads: the encoder, the schedule's horizon, the step
// limit, and a maker of fused steps over the one set of weights.
struct HogwildPlan {
  const TextEncoder* encoder = nullptr;
  int64_t total_steps = 0;
  int64_t step_limit = 0;
  std::function<std::unique_ptr<FusedSgd>()> make_step;
};

// One epoch (run.state.epoch) on train.fast_path_threads threads from its beginning; adds
// the steps, examples and losses to the run's state. Returns whether the step limit ended
// it before the data did. A thread's sift::Error stops them all and is rethrown.
bool hogwild_epoch(RunCore& run, const HogwildPlan& plan, Progress& progress);

}  // namespace sift
