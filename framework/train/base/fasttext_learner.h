// The fastText model's learner on plain arrays (fastText's tables, lite_weights.h): the
// fused step on one thread or Hogwild threads, evaluation on the plain-array forward
// (lite_evaluation.h), checkpoints written without LibTorch, and the best weights kept as
// the rows training changed since (RowJournal). Both programs train the fastText model's
// fast path with it: sift-lite over its own arrays (lite_trainer.cc), sift-main over the
// LibTorch model's tensors (torch_learner.cc), each adding what only it has (its report's
// words, its environment; sift-main: LibTorch's random state in last.ckpt and ns's draws).
#pragma once

#include <memory>
#include <vector>

#include "framework/train/base/learner.h"
#include "framework/train/base/lite_weights.h"
#include "framework/train/base/row_journal.h"

namespace sift {

class FastTextLearner : public Learner {
 public:
  FastTextLearner(RunCore& run, std::unique_ptr<FastTextTables> tables);

  Stepped step(const RawBatch& batch, double lr, bool logs) override;
  // Hogwild threads step outside step(), where no journal sees their rows.
  bool best_to_disk() const override;
  bool holds_best_copy() const override { return journal_.active(); }
  void copy_best() override;
  void drop_best_copy() override;
  void restore_best_copy() override;
  std::unique_ptr<FusedSgd> make_fused() override { return new_step(); }
  bool fused() const override { return true; }
  Evaluation evaluate(ShardedStream& stream, ConfusedExamples* confused) override;
  int64_t bytes() const override { return tables_->bytes(); }
  bool weights_finite() const override { return tables_->all_finite(); }
  void load_weights(const std::string& path) override { tables_->load(path); }
  void write(const std::string& path, const nlohmann::json& meta,
             const std::map<std::string, std::string>& blobs, Saved what) override;

 protected:
  // A fused step over the tables (the default: bag_sgd's, which draws nothing at random).
  virtual std::unique_ptr<FusedSgd> new_step();
  RunCore& run_;

 private:
  void keep_best_rows(const RawBatch& batch);
  void swap_best();

  std::unique_ptr<FastTextTables> tables_;
  std::unique_ptr<FusedSgd> step_;  // made at the first step (new_step is virtual)
  int64_t nonfinite_in_a_row_ = 0;  // skip_batch: skipped steps since the last taken one
  // The best weights: their embedding rows that training changed since, their output layer.
  RowJournal journal_;
  std::vector<float> best_output_, best_bias_;
};

}  // namespace sift
