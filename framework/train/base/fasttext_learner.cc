#include "framework/train/base/fasttext_learner.h"

#include <algorithm>

#include "framework/train/base/lite_evaluation.h"
#include "framework/train/base/train_loop.h"

namespace sift {

// The best weights, while training goes on from them, are the rows its steps change kept
// as they were (RowJournal) and a copy of the small output layer. Written to best.ckpt at
// each such epoch start instead (and read back at the end), they cost SST-2 three 4 MB
// saves, each a search of the 80 MB table for changed rows, a CRC and an fsync: 64-600 ms
// per epoch start against 13 ms with the journal, beside 10 ms of steps per epoch
// (train.log's times, load 4-5).
FastTextLearner::FastTextLearner(RunCore& run, std::unique_ptr<FastTextTables> tables)
    : run_(run), tables_(std::move(tables)), journal_(tables_->rows(), tables_->dim()) {}

Learner::Stepped FastTextLearner::step(const RawBatch& batch, double lr, bool /*logs*/) {
  if (!step_) step_ = new_step();
  if (journal_.active()) keep_best_rows(batch);
  return {fused_sgd_step(*step_, batch, lr, run_, nonfinite_in_a_row_), true};
}

bool FastTextLearner::best_to_disk() const { return run_.plan.train.fast_path_threads > 1; }

void FastTextLearner::copy_best() {
  journal_.start();
  const BagTables t = tables_->bag();
  best_output_.assign(t.weight, t.weight + t.classes * t.dim);
  best_bias_.assign(t.bias, t.bias + t.classes);
}

void FastTextLearner::drop_best_copy() {
  journal_.clear();
  best_output_ = {};
  best_bias_ = {};
}

void FastTextLearner::restore_best_copy() {
  if (!journal_.active()) return;
  swap_best();
  drop_best_copy();  // it holds the weights training left
}

Evaluation FastTextLearner::evaluate(ShardedStream& stream, ConfusedExamples* confused) {
  return lite_evaluate(*tables_, stream, confused);
}

void FastTextLearner::write(const std::string& path, const nlohmann::json& meta,
                            const std::map<std::string, std::string>& blobs, Saved what) {
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

std::unique_ptr<FusedSgd> FastTextLearner::new_step() { return bag_sgd(tables_->bag()); }

// Before a step changes them: the batch's rows as the best weights hold them. A journal
// past a quarter of the table goes to best.ckpt instead (write_best_out), as a run that
// changes most rows between validations would otherwise hold a second table.
void FastTextLearner::keep_best_rows(const RawBatch& batch) {
  journal_.keep(tables_->embedding(), batch.ids.data(), static_cast<int64_t>(batch.ids.size()));
  if (journal_.bytes() > tables_->bytes() / 4) write_best_out(run_, *this);
}

// Swaps the best weights (the journal's rows, the output layer's copy) with the tables'.
void FastTextLearner::swap_best() {
  const BagTables t = tables_->bag();
  journal_.swap(t.embedding);
  std::swap_ranges(best_output_.begin(), best_output_.end(), t.weight);
  std::swap_ranges(best_bias_.begin(), best_bias_.end(), t.bias);
}

}  // namespace sift
