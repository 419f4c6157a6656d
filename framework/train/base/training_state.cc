#include "framework/train/base/training_state.h"

#include <fmt/format.h>

#include "core/error.h"
#include "framework/runtime/base/run_folder.h"

namespace sift {
namespace {

template <class T>
T required(const nlohmann::json& meta, const char* key, const std::string& path) {
  auto it = meta.find(key);
  if (it == meta.end()) throw Error(fmt::format("{}: the checkpoint has no '{}'", path, key));
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw Error(fmt::format("{}: the checkpoint's '{}' has the wrong type", path, key));
  }
}

}  // namespace

void TrainingState::to_meta(nlohmann::json& meta, bool epoch_complete) const {
  meta.update({{"epoch", epoch},
               {"step", step},
               {"epoch_complete", epoch_complete},
               {"examples_seen", examples_seen},
               {"epoch_loss_sum", epoch_loss_sum},
               {"epoch_loss_examples", epoch_loss_examples},
               {"has_best", has_best},
               {"best_value", best_value},
               {"best_epoch", best_epoch},
               {"best_step", best_step},
               {"bad_validations", bad_validations},
               {"metrics", last_metrics},
               {"metrics_rows", metrics_rows}});
  // Only when there are some: checkpoints of runs without skips keep their bytes.
  if (skipped_batches > 0) meta["skipped_batches"] = skipped_batches;
  if (!row_window.is_null()) meta["row_window"] = row_window;
}

TrainingState TrainingState::from_meta(const nlohmann::json& meta, const nlohmann::json& counters,
                                       const std::string& path) {
  TrainingState s;
  s.epoch = required<int64_t>(meta, "epoch", path);
  s.step = required<int64_t>(meta, "step", path);
  s.has_best = required<bool>(meta, "has_best", path);
  s.best_value = required<double>(meta, "best_value", path);
  s.best_epoch = required<int64_t>(meta, "best_epoch", path);
  s.best_step = required<int64_t>(meta, "best_step", path);
  s.bad_validations = required<int64_t>(meta, "bad_validations", path);
  s.last_metrics = meta.value("metrics", nlohmann::json());       // null before any validation
  s.skipped_batches = meta.value("skipped_batches", int64_t{0});  // written only when > 0
  s.metrics_rows = meta.value("metrics_rows", int64_t{-1});       // older checkpoints: unknown
  s.examples_seen = required<int64_t>(counters, "examples_seen", path);
  s.row_window = counters.value("row_window", nlohmann::json());  // written when not null
  if (epoch_complete_in(meta, path)) {
    ++s.epoch;
  } else {
    s.epoch_loss_sum = required<double>(counters, "epoch_loss_sum", path);
    s.epoch_loss_examples = required<int64_t>(counters, "epoch_loss_examples", path);
  }
  return s;
}

std::string TrainingState::rank_counters() const {
  nlohmann::json counters{{"examples_seen", examples_seen},
                          {"epoch_loss_sum", epoch_loss_sum},
                          {"epoch_loss_examples", epoch_loss_examples}};
  if (!row_window.is_null()) counters["row_window"] = row_window;
  return counters.dump();
}

bool epoch_complete_in(const nlohmann::json& meta, const std::string& path) {
  return required<bool>(meta, "epoch_complete", path);
}

void task_counts_to_meta(const Task& task, nlohmann::json& meta) {
  meta.update({{"train_records", task.train_records},
               {"train_skipped", task.train_skipped},
               {"label_counts", task.label_counts}});
}

void task_counts_from_meta(const nlohmann::json& meta, const std::string& path, Task& task) {
  task.train_records = required<uint64_t>(meta, "train_records", path);
  task.train_skipped = required<uint64_t>(meta, "train_skipped", path);
  task.label_counts = required<std::vector<uint64_t>>(meta, "label_counts", path);
}

nlohmann::json checkpoint_meta(const std::string& model_type, int64_t num_classes, int64_t epoch,
                               int64_t step) {
  return {{"model", model_type}, {"num_classes", num_classes}, {"epoch", epoch}, {"step", step}};
}

nlohmann::json best_checkpoint_meta(const std::string& model_type, int64_t num_classes,
                                    const TrainingState& s, const nlohmann::json& file_hashes,
                                    const nlohmann::json& metrics) {
  nlohmann::json meta = checkpoint_meta(model_type, num_classes, s.best_epoch, s.best_step);
  meta["run_files"] = file_hashes;
  meta["metrics"] = metrics;
  return meta;
}

}  // namespace sift
