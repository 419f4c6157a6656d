// A validation's record (metrics.jsonl's line, the log line) and what it does to the best
// so far, written by the training loop (train_loop.h) for every learner.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "config/config.h"
#include "datasets/labels.h"
#include "datasets/sharded_stream.h"
#include "framework/runtime/base/evaluation_result.h"
#include "framework/train/base/training_state.h"

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

// report.json's figures of the final evaluation `e` of split `name` (`skipped` malformed
// records over all ranks; `confused`: the validation split's most confused pairs, or null)
// and its section of report.txt, added to `text`. An empty split is an error.
nlohmann::json final_split(const Evaluation& e, const std::string& name, const LabelSet& labels,
                           const ShardedStream& stream, int64_t skipped,
                           const nlohmann::json& confused, std::string& text);

// train.patience validations in a row without improvement.
bool stops_early(const TrainConfig& t, const TrainingState& s);

}  // namespace sift
