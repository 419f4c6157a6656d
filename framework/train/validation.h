// Validation during training (the best weights, early stopping, metrics.jsonl) and the
// final evaluation of the best weights on the validation and test splits.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "datasets/sharded_stream.h"
#include "datasets/text_encoder.h"
#include "framework/train/progress.h"
#include "framework/train/run.h"

namespace sift {

// Validates on `valid` (none: only the training loss is recorded), keeps the best
// weights, counts validations without improvement, appends to metrics.jsonl and logs.
void validate(Run& run, ShardedStream* valid, Progress& progress, bool end_of_epoch);

// train.patience validations in a row without improvement.
bool stop_early(const Run& run);

// A resume's first step: cuts metrics.jsonl in `run_dir` back to its first `rows` lines,
// the validations last.ckpt had seen, so that those logged after it and run again are
// not doubled (rows < 0: unknown, nothing cut). Returns the lines it keeps. A
// metrics.jsonl that is not a regular file (a symlink, a device) is left alone.
int64_t cut_metrics_back(const std::string& run_dir, int64_t rows);

// The best weights on the validation and test splits: the report's "splits", and their
// text tables appended to `text_report`.
nlohmann::json final_evaluation(Run& run, const TextEncoder& encoder, std::string& text_report);

}  // namespace sift
