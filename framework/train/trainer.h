// Training a classifier from a config: create the data, the model and the optimizer,
// loop over epochs, validate, keep the best and last checkpoints, write the report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "framework/train/base/train_options.h"

namespace sift {

// Trains, evaluates the best model on the validation and test data and returns the
// report (also written to RUN_DIR/report.json): run folder, metrics per split.
nlohmann::json train(const SiftConfig& config, const TrainOptions& options = {});

// Continues the run in `run_dir` from its last.ckpt exactly where it stopped (model,
// optimizer, random state, data position, step and best metric). `overrides` may change
// e.g. train.epochs or train.max_steps, but not options that fix the model's shape.
// When the run has nothing left to train, nothing is trained and the report holds only
// run_dir and "nothing_to_do": what to change to train longer.
nlohmann::json resume(const std::string& run_dir, const std::vector<std::string>& overrides,
                      const TrainOptions& options = {});

}  // namespace sift
