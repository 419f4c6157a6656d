// run.threads: 0 on the fast path: the cores split between readers and trainers so that the
// threads in all are the cores. Below four cores one trainer takes the batches of the other
// cores' readers (data.workers); from four, half the cores train Hogwild-style
// (train.fast_path_threads), each beside the one reader that feeds it (hogwild.cc), as
// fastText's -thread trains. A key the user gave keeps its value, and the split fills the
// other. Measured on the 1M-line synthetic set (bench/RESULTS.md): 2 cores, two readers and
// one trainer put 3 busy threads on 2 cores.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config/config.h"

namespace sift {

struct ThreadSplit {
  int64_t trainers = 1;  // train.fast_path_threads
  int64_t readers = 1;   // data.workers (one trainer), or one per Hogwild trainer
  std::string line;      // what the run's log says of it
};

// The split of `cores` for a config whose run.threads was given as 0 and whose run takes the
// fast path (fast_path_rules.h), or nothing: run.threads left at its default or given another
// value, or a run through autograd, keeps the threads as configured.
std::optional<ThreadSplit> split_cores(const SiftConfig& config, int64_t cores);

// Gives data.workers and train.fast_path_threads the split of this machine's cores, so that
// the run's config.yaml records what ran and a resume reads the same; returns the line the
// run's log says, or "" when split_cores gives nothing.
std::string apply_core_split(SiftConfig& config);

}  // namespace sift
