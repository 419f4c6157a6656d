// Resuming a run from its checkpoints (train_loop.h writes them): reading last.ckpt back,
// repairing best.ckpt after a crash between a save's two writes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "framework/runtime/checkpoint.h"
#include "framework/train/run.h"

namespace sift {

// A transfer stream's data position in last.ckpt (one per rank, as "data").
std::string transfer_blob(const std::string& name);
// LibTorch's CPU generator's state (last.ckpt's "rng" of each rank).
std::string rng_state();

// Resuming from last.ckpt (`path`), in two steps around the optimizer's creation. First
// the counters and the task's counts; the model's weights (best.ckpt's, as loaded from
// the run folder) become the best weights in memory when there was a best.
void restore_counters(Run& run, const Checkpoint& last, const std::string& path);
// Before a resume loads the run: a crash between the first save's last.ckpt and
// best.ckpt leaves no best.ckpt; when last.ckpt's weights are the best, writes it as
// that save would have (a hard link of last.ckpt). Anything else is left for load_run to
// refuse.
void restore_missing_best(const std::string& run_dir);
// When last.ckpt's weights are the best (best.ckpt is last.ckpt's file), takes their
// metrics from last.ckpt and says whether best.ckpt must be written again (save_best):
// unless it is that file already, a crash between a save's two writes left it missing, naming an
// older last.ckpt, or holding an older best.
bool best_needs_repair(Run& run, const Checkpoint& last);
// A resume's first step: cuts metrics.jsonl in `run_dir` back to its first `rows` lines,
// the validations last.ckpt had seen, so that those logged after it and run again are
// not doubled (rows < 0: unknown, nothing cut). Returns the lines it keeps. A
// metrics.jsonl that is not a regular file (a symlink, a device) is left alone.
int64_t cut_metrics_back(const std::string& run_dir, int64_t rows);
// Then the model's and optimizer's state, this rank's random state and the loss scale.
// Returns this rank's data position ("" when the epoch was complete).
std::string restore_last(Run& run, const Checkpoint& last, const std::string& path);

}  // namespace sift
