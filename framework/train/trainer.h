// Training a classifier from a config: create the data, the model and the optimizer,
// loop over epochs, validate, keep the best and last checkpoints, write the report.
#pragma once

#include <atomic>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/error.h"

namespace sift {

// Training stopped on request (SIGINT/SIGTERM) after saving where it stood; the message
// says how to continue. A tool exits with 128 + signal(), as a shell reports a process
// that a signal ended.
class Interrupted : public Error {
 public:
  Interrupted(const std::string& message, int signal_number)
      : Error(message), signal_(signal_number) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

struct TrainOptions {
  bool quiet = false;  // no progress output (tests)
  // Set (to the signal's number) by a tool's SIGINT/SIGTERM handler: training saves
  // last.ckpt at the next step boundary and throws sift::Interrupted. Null: never.
  const std::atomic<int>* stop_signal = nullptr;
  // A resume may --set the keys that choose the data (data_keys_changed in setup.h).
  bool allow_data_change = false;
};

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
