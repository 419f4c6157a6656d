// RUN/metrics.csv: one row every train.log_every optimizer steps (step, epoch, the mean
// training loss since the last row, learning rate, examples/s and tokens/s since the last
// row, gradient norm, loss scale) and one row per validation (its metrics, the training
// columns empty), in PyTorch Lightning's CSVLogger layout: one header row naming every
// column, then rows with empty cells for what a row does not have. Rank 0 writes it.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "framework/train/base/progress.h"
#include "framework/train/base/tensorboard.h"

namespace sift {

// What one training row says; NaN: the cell stays empty.
struct StepRow {
  int64_t step = 0;
  int64_t epoch = 0;
  double lr = 0.0;
  double grad_norm = 0.0;
  double loss_scale = 0.0;
};

class StepLog {
 public:
  StepLog() = default;
  ~StepLog();
  StepLog(const StepLog&) = delete;
  StepLog& operator=(const StepLog&) = delete;

  // Opens `path` with the training columns and `valid_columns` (without the "valid_"
  // prefix). keep_up_to_step 0: a new file. Else (a resumed run) the rows of steps up to
  // it are kept, and a partly written last line or a file with other columns is dropped.
  // An empty path: counts but writes nothing (ranks other than 0). A tb_dir: every
  // non-empty cell also goes there as a TensorBoard scalar tagged with its column.
  // `distill`: a distill_loss column after the training ones (the soft loss's mean).
  void open(const std::string& path, const std::vector<std::string>& valid_columns,
            int64_t keep_up_to_step, const std::string& tb_dir = "", bool distill = false);

  // One batch of the step in progress: its examples, ids (tokens) and mean loss.
  void count(int64_t examples, int64_t tokens, double loss) {
    examples_ += examples;
    tokens_ += tokens;
    loss_sum_ += loss * static_cast<double>(examples);
  }
  // Distillation: one batch's mean soft loss (counted with its examples).
  void count_distill(int64_t examples, double soft_loss) {
    distill_examples_ += examples;
    distill_sum_ += soft_loss * static_cast<double>(examples);
  }
  // A training row from what was counted since the last one.
  void train_row(const StepRow& row);
  // The console's figure: the steps counted since the last row, or right after a row
  // (nothing counted yet) that row's; `step` is the step in progress.
  LossWindow loss_window(int64_t step) const;
  // What was counted since the last row (null when nothing was), for last.ckpt; and that
  // back on resume (after open), so the next row sums the same steps as without the stop.
  nlohmann::json window() const;
  void restore_window(const nlohmann::json& window);
  // A validation row: `record`'s "valid_*" values (train_loop.cc's validation record).
  void valid_row(int64_t step, int64_t epoch, const nlohmann::json& record);
  // Whether event files are written (train.tensorboard, rank 0), and a text summary
  // (markdown) there; it reaches the disk with the next row.
  bool tensorboard() const { return tb_.is_open(); }
  void tensorboard_text(const std::string& tag, int64_t step, const std::string& markdown) {
    tb_.text(tag, step, markdown);
  }

 private:
  void write_row(const std::vector<std::string>& cells);

  std::FILE* file_ = nullptr;
  std::string path_;
  TensorBoardWriter tb_;
  std::vector<std::string> columns_;
  int64_t examples_ = 0;
  int64_t tokens_ = 0;
  double loss_sum_ = 0.0;
  int64_t window_first_ = 1;  // the first step counted since the last row
  LossWindow last_window_;    // the last row's train_loss and the steps it covers
  size_t train_columns_ = 0;  // the columns before the valid_* ones
  int64_t distill_examples_ = 0;
  double distill_sum_ = 0.0;
  std::chrono::steady_clock::time_point last_row_ = std::chrono::steady_clock::now();
};

// Parses metrics.csv's text: the header's columns and every complete row as
// column -> value (empty cells left out). A line cut short (a run killed mid-write) or
// with the wrong number of cells is skipped, never an error.
struct StepLogTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // cells as written, one per column
};
StepLogTable parse_step_log(const std::string& text);

}  // namespace sift
