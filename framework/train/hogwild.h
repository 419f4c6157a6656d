// Hogwild training on the fast path (train.fast_path_threads > 1), as fastText trains:
// each thread reads its own part of the training data (its own stream, one reader) and
// takes fused SGD steps on the shared weights without locks. Threads may overwrite each
// other's updates of a row, and which thread reaches which step depends on timing, so
// such runs are neither deterministic nor bit-exact on resume; last.ckpt is written at
// epoch ends only (a run stopped inside an epoch resumes at the next epoch).
#pragma once

#include <cstdint>

#include "datasets/text_encoder.h"
#include "framework/train/progress.h"
#include "framework/train/run.h"

namespace sift {

// What the epoch loop tells the threads: the encoder, the schedule's horizon and the
// step limit.
struct HogwildPlan {
  const TextEncoder* encoder = nullptr;
  int64_t total_steps = 0;
  int64_t step_limit = 0;
};

// Whether `run` trains Hogwild-style (the fast path with more than one thread).
bool trains_hogwild(const Run& run);

// One epoch (run.state.epoch) on train.fast_path_threads threads from its beginning; adds
// the steps, examples and losses to run.state. Returns whether the step limit ended it
// before the data did. A thread's sift::Error stops them all and is rethrown.
bool hogwild_steps(Run& run, const HogwildPlan& plan, Progress& progress);

}  // namespace sift
