// The counters of a training run: what last.ckpt saves so that a resumed run continues
// exactly where this one stood. Every metadata key is written and read here, side by
// side (to_meta / from_meta), so a key cannot be written under one name and read under
// another.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "framework/runtime/base/task.h"

namespace sift {

struct TrainingState {
  int64_t step = 0;   // optimizer steps taken
  int64_t epoch = 1;  // the epoch in progress
  // This rank's counters (rank 0's are in the metadata, the others' in a blob each).
  int64_t examples_seen = 0;
  double epoch_loss_sum = 0.0;
  int64_t epoch_loss_examples = 0;
  nlohmann::json last_metrics;  // the last validation record
  // The best validation of train.best_metric so far, and how many came after it
  // without improvement (early stopping).
  bool has_best = false;
  double best_value = 0.0;
  int64_t best_epoch = 0;
  int64_t best_step = -1;
  int64_t bad_validations = 0;
  int64_t skipped_batches = 0;  // train.on_nonfinite: skip_batch's skipped updates
  // Lines in metrics.jsonl (one per validation); -1: unknown (checkpoints without it).
  // A resume cuts the file back to this, so validations after the save are not doubled.
  int64_t metrics_rows = 0;
  // metrics.csv's row in progress at a save (StepLog::window): its loss sums, so that the
  // first row after a resume says what the uninterrupted run's says (issue #42). Null
  // when the save fell on a row: such checkpoints keep their bytes.
  nlohmann::json row_window;

  // last.ckpt's metadata: the counters, and whether the epoch was complete when saved.
  void to_meta(nlohmann::json& meta, bool epoch_complete) const;
  // Reads what to_meta wrote, with this rank's counters from `counters` (rank 0: the
  // metadata itself, else its rank_counters blob); a missing key is a sift::Error naming
  // `path` and the key. A complete epoch resumes at the next one with fresh loss sums.
  static TrainingState from_meta(const nlohmann::json& meta, const nlohmann::json& counters,
                                 const std::string& path);

  // This rank's own counters (a blob per rank in last.ckpt).
  std::string rank_counters() const;
};

// Whether last.ckpt was written at the end of an epoch (else mid-epoch, with a data
// position to restore).
bool epoch_complete_in(const nlohmann::json& meta, const std::string& path);

// The training data's counts a task learns in its vocabulary pass, saved beside the
// counters so a resumed run needs no pass of its own.
void task_counts_to_meta(const Task& task, nlohmann::json& meta);
void task_counts_from_meta(const nlohmann::json& meta, const std::string& path, Task& task);

// Metadata every checkpoint of a run starts with: the model type and number of classes,
// and the epoch and step its weights come from.
nlohmann::json checkpoint_meta(const std::string& model_type, int64_t num_classes, int64_t epoch,
                               int64_t step);

// best.ckpt's metadata (the training loop writes it, train_loop.h): checkpoint_meta at
// the best validation's epoch and step, the run's file hashes and that validation's
// record.
nlohmann::json best_checkpoint_meta(const std::string& model_type, int64_t num_classes,
                                    const TrainingState& s, const nlohmann::json& file_hashes,
                                    const nlohmann::json& metrics);

// The best validation's weights, in both trainers: where they are, and best.ckpt's state.
struct BestState {
  // The model's own weights are the best: nothing is copied until training would change
  // them (keep_best_weights). A run whose last validation is its best (most fastText
  // runs) never holds a second table: the copy was the peak RSS of the 1M-line run,
  // 344 MB against 258 MB during training.
  bool in_model = false;
  // best.ckpt holds them and no copy is kept: a table that began as a fill is written as
  // its changed rows (TREC: 1.8 MB in 0.05 s), so one write replaces the second 80 MB
  // table an SST-2 run held (peak RSS 335 MB). One process only: every rank restores them.
  bool on_disk = false;
  nlohmann::json metrics;
  bool saved = true;  // best.ckpt holds them
  // best.ckpt is last.ckpt's file (a hard link) instead of a copy (they were the same).
  bool is_reference = false;

  // The weights now in the model are the best, at the state's step (validation `record`).
  void take(TrainingState& s, const nlohmann::json& record) {
    in_model = true;
    s.best_epoch = s.epoch;
    s.best_step = s.step;
    metrics = record;
    saved = false;
  }
};

}  // namespace sift
