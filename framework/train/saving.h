// The trainer's checkpoints: the best weights kept in memory and written to best.ckpt,
// last.ckpt with everything a resumed run needs, and reading last.ckpt back.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "datasets/sharded_stream.h"
#include "framework/runtime/checkpoint.h"
#include "framework/train/run.h"

namespace sift {

// Before training changes the weights: copies them when they are the best.
void keep_best_weights(Run& run);
// Puts the best weights back into the model (nothing when there are none or it has them).
void restore_best(Run& run);

// Writes last.ckpt (every rank's data position and random state gathered on rank 0),
// then best.ckpt when the best weights changed since it was written.
void save_last(Run& run, const ShardedStream& stream, bool epoch_complete);

// Resuming from last.ckpt (`path`), in two steps around the optimizer's creation. First
// the counters and the task's counts; the model's weights (best.ckpt's, as loaded from
// the run folder) become the best weights in memory when there was a best.
void restore_counters(Run& run, const Checkpoint& last, const std::string& path);
// Before a resume loads the run: a crash between the first save's last.ckpt and
// best.ckpt leaves no best.ckpt; when last.ckpt's weights are the best, writes it as
// that save would have (naming them). Anything else is left for load_run to refuse.
void restore_missing_best(const std::string& run_dir);
// When last.ckpt's weights are the best (best.ckpt names them), takes their metrics
// from last.ckpt, and writes best.ckpt again unless it names them already: a crash
// between a save's two writes left it missing, naming an older last.ckpt, or holding an
// older best. Needs run.file_hashes.
void repair_best(Run& run, const Checkpoint& last);
// Then the model's and optimizer's state, this rank's random state and the loss scale.
// Returns this rank's data position ("" when the epoch was complete).
std::string restore_last(Run& run, const Checkpoint& last, const std::string& path);

}  // namespace sift
