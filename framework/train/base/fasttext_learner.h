// The fastText model's learner on plain arrays (fastText's tables, lite_weights.h): the
// fused step on one thread or Hogwild threads, evaluation on the plain-array forward
// (lite_evaluation.h), checkpoints written without LibTorch, and the best weights kept as
// the rows training changed since (RowJournal). Both programs train the fastText model's
// fast path with it: sift-lite over its own arrays (lite_trainer.cc), sift-main over the
// LibTorch model's tensors (torch_learner.cc), each adding what only it has (its report's
// words, its environment; sift-main: LibTorch's random state in last.ckpt and ns's draws).
//
// The best weights, while training goes on from them, are the rows its steps change kept
// as they were (RowJournal) and a copy of the small output layer. Written to best.ckpt at
// each such epoch start instead (and read back at the end), they cost SST-2 three 4 MB
// saves, each a search of the 80 MB table for changed rows, a CRC and an fsync: 64-600 ms
// per epoch start against 13 ms with the journal, beside 10 ms of steps per epoch
// (train.log's times, load 4-5).
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "framework/train/base/learner.h"
#include "framework/train/base/lite_evaluation.h"
#include "framework/train/base/lite_weights.h"
#include "framework/train/base/row_journal.h"
#include "framework/train/base/train_loop.h"

namespace sift {

class FastTextLearner : public Learner {
 public:
  FastTextLearner(RunCore& run, std::unique_ptr<FastTextTables> tables)
      : run_(run), tables_(std::move(tables)), journal_(tables_->rows(), tables_->dim()) {}

  Stepped step(const RawBatch& batch, double lr, bool /*logs*/) override {
    if (!step_) step_ = new_step();
    if (journal_.active()) keep_best_rows(batch);
    return {fused_sgd_step(*step_, batch, lr, run_, nonfinite_in_a_row_), true};
  }
  // Hogwild threads step outside step(), where no journal sees their rows.
  bool best_to_disk() const override { return run_.plan.train.fast_path_threads > 1; }
  bool holds_best_copy() const override { return journal_.active(); }
  void copy_best() override {
    journal_.start();
    const BagTables t = tables_->bag();
    best_output_.assign(t.weight, t.weight + t.classes * t.dim);
    best_bias_.assign(t.bias, t.bias + t.classes);
  }
  void drop_best_copy() override {
    journal_.clear();
    best_output_ = {};
    best_bias_ = {};
  }
  void restore_best_copy() override {
    if (!journal_.active()) return;
    swap_best();
    drop_best_copy();  // it holds the weights training left
  }
  std::unique_ptr<FusedSgd> make_fused() override { return new_step(); }
  bool fused() const override { return true; }
  Evaluation evaluate(ShardedStream& stream, ConfusedExamples* confused) override {
    return lite_evaluate(*tables_, stream, confused);
  }
  int64_t bytes() const override { return tables_->bytes(); }
  bool weights_finite() const override { return tables_->all_finite(); }
  void load_weights(const std::string& path) override { tables_->load(path); }
  void write(const std::string& path, const nlohmann::json& meta,
             const std::map<std::string, std::string>& blobs, Saved what) override {
    CheckpointParts c;
    c.meta = meta;
    tables_->add_to(c);
    for (const auto& [name, bytes] : blobs) c.blobs[name] = bytes;
    if (what != Saved::best_copy || !journal_.active()) return write_checkpoint(path, c);
    // The tables hold the best weights while they are written, the trained ones after.
    swap_best();
    try {
      write_checkpoint(path, c);
    } catch (...) {
      swap_best();
      throw;
    }
    swap_best();
  }

 protected:
  // A fused step over the tables (the default: bag_sgd's, which draws nothing at random).
  virtual std::unique_ptr<FusedSgd> new_step() { return bag_sgd(tables_->bag()); }
  RunCore& run_;

 private:
  // Before a step changes them: the batch's rows as the best weights hold them. A journal
  // past a quarter of the table goes to best.ckpt instead (write_best_out), as a run that
  // changes most rows between validations would otherwise hold a second table.
  void keep_best_rows(const RawBatch& batch) {
    journal_.keep(tables_->embedding(), batch.ids.data(), static_cast<int64_t>(batch.ids.size()));
    if (journal_.bytes() > tables_->bytes() / 4) write_best_out(run_, *this);
  }
  // Swaps the best weights (the journal's rows, the output layer's copy) with the tables'.
  void swap_best() {
    const BagTables t = tables_->bag();
    journal_.swap(t.embedding);
    std::swap_ranges(best_output_.begin(), best_output_.end(), t.weight);
    std::swap_ranges(best_bias_.begin(), best_bias_.end(), t.bias);
  }

  std::unique_ptr<FastTextTables> tables_;
  std::unique_ptr<FusedSgd> step_;  // made at the first step (new_step is virtual)
  int64_t nonfinite_in_a_row_ = 0;  // skip_batch: skipped steps since the last taken one
  // The best weights: their embedding rows that training changed since, their output layer.
  RowJournal journal_;
  std::vector<float> best_output_, best_bias_;
};

}  // namespace sift
