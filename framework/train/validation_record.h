// A validation's record (metrics.jsonl's line, the log line) and what it does to the best
// so far, alike in sift-main's trainer (validation.h) and sift-lite's (lite_trainer.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "config/config.h"
#include "datasets/labels.h"
#include "framework/runtime/evaluation_result.h"
#include "framework/train/training_state.h"

namespace sift {

// {"epoch", "step", "end_of_epoch", "train_loss", "seconds"} at the state's step, and the
// log line "epoch E step S: train loss L" into `line`.
nlohmann::json validation_record(const TrainingState& s, double train_loss, double seconds,
                                 bool end_of_epoch, std::string& line);

// Adds the validation split's metrics ("valid_*", per class, train.best_label's F1) to
// `record` and `line`; returns train.best_metric's value.
double add_valid_metrics(const Evaluation& e, const TrainConfig& t, const LabelSet& labels,
                         nlohmann::json& record, std::string& line);

// Whether `value` beats the best so far by train.min_delta: then it is the best (state's
// best value, no bad validations since), else one more bad validation.
bool take_if_best(const TrainConfig& t, double value, TrainingState& s);

// train.patience validations in a row without improvement.
bool stops_early(const TrainConfig& t, const TrainingState& s);

}  // namespace sift
