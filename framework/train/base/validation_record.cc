#include "framework/train/base/validation_record.h"

#include <fmt/format.h>

#include "config/metric_table.h"
#include "core/error.h"
#include "framework/runtime/base/confused_examples.h"
#include "framework/runtime/base/task.h"

namespace sift {

nlohmann::json validation_record(const TrainingState& s, double train_loss, double seconds,
                                 bool end_of_epoch, std::string& line) {
  line = fmt::format("epoch {} step {}: train_loss {:.4f} (mean of the epoch so far)", s.epoch,
                     s.step, train_loss);
  return {{"epoch", s.epoch},
          {"step", s.step},
          {"end_of_epoch", end_of_epoch},
          {"train_loss", train_loss},
          {"seconds", seconds}};
}

double add_valid_metrics(const Evaluation& e, const TrainConfig& t, const LabelSet& labels,
                         nlohmann::json& record, std::string& line) {
  const nlohmann::json summary = e.summary();
  for (const auto& [key, value] : summary.items()) record["valid_" + key] = value;
  record["valid_per_class"] = e.per_class(labels.names());
  line += ", valid " + e.headline();
  if (t.best_metric == BestMetric::label_f1) {
    record["valid_label_f1"] = e.f1(labels.id(t.best_label));
    line += fmt::format(", F1 of {} {:.4f}", t.best_label, record["valid_label_f1"].get<double>());
  }
  return record["valid_" + to_string(t.best_metric)].get<double>();
}

bool take_if_best(const TrainConfig& t, double value, TrainingState& s) {
  const bool better = !s.has_best || (metric_named(to_string(t.best_metric)).lower_is_better
                                          ? value < s.best_value - t.min_delta
                                          : value > s.best_value + t.min_delta);
  if (!better) {
    ++s.bad_validations;
    return false;
  }
  s.best_value = value;
  s.has_best = true;
  s.bad_validations = 0;
  return true;
}

nlohmann::json final_split(const Evaluation& e, const std::string& name, const LabelSet& labels,
                           const ShardedStream& stream, int64_t skipped,
                           const nlohmann::json& confused, std::string& text) {
  if (e.examples() == 0) throw Error(empty_split_message(name, stream));
  nlohmann::json split = e.to_json(labels.names());
  split["loss"] = e.loss;
  split["skipped_records"] = skipped;
  text += fmt::format("== {} ==\n{}\n", name, e.to_text(labels.names()));
  if (!confused.is_null()) {
    split["confused_examples"] = confused;
    text += most_confused_text(confused);
  }
  return split;
}

bool stops_early(const TrainConfig& t, const TrainingState& s) {
  return t.patience > 0 && s.bad_validations >= t.patience;
}

}  // namespace sift
