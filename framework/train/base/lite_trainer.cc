#include "framework/train/base/lite_trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "config/options.h"
#include "framework/runtime/base/checkpoint_writer.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/runtime/base/task.h"
#include "framework/train/base/fast_path_rules.h"
#include "framework/train/base/lite_evaluation.h"
#include "framework/train/base/lite_weights.h"
#include "framework/train/base/row_journal.h"
#include "framework/train/base/run_report.h"
#include "framework/train/base/thread_split.h"
#include "framework/train/base/train_loop.h"
#include "models/base/traits.h"

namespace sift {
namespace {

// The fastText model's tables on plain arrays (lite_weights.h) as the loop's learner: the
// fused step on one thread or Hogwild threads, lite_evaluate, and checkpoints written
// without LibTorch (last.ckpt without LibTorch's generator state, which the fast path draws
// nothing from, or optimizer state, which plain SGD keeps none of: a resume by sift-main
// starts both fresh, which changes nothing it computes).
//
// The best weights, while training goes on from them, are the rows its steps change kept
// as they were (RowJournal) and a copy of the small output layer. Written to best.ckpt at
// each such epoch start instead (and read back at the end), they cost SST-2 three 4 MB
// saves, each a search of the 80 MB table for changed rows, a CRC and an fsync: 64-600 ms
// per epoch start against 13 ms with the journal, beside 10 ms of steps per epoch
// (train.log's times, load 4-5).
class FastTextLearner : public Learner {
 public:
  FastTextLearner(RunCore& run, FastTextTables& tables)
      : run_(run),
        tables_(tables),
        step_(bag_sgd(tables.bag())),
        journal_(tables.rows(), tables.dim()) {}

  Stepped step(const RawBatch& batch, double lr, bool /*logs*/) override {
    if (journal_.active()) keep_best_rows(batch);
    return {fused_sgd_step(*step_, batch, lr, run_, nonfinite_in_a_row_), true};
  }
  // Hogwild threads step outside step(), where no journal sees their rows.
  bool best_to_disk() const override { return run_.plan.train.fast_path_threads > 1; }
  bool holds_best_copy() const override { return journal_.active(); }
  void copy_best() override {
    journal_.start();
    const BagTables t = tables_.bag();
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
  std::unique_ptr<FusedSgd> make_fused() override { return bag_sgd(tables_.bag()); }
  bool fused() const override { return true; }
  Evaluation evaluate(ShardedStream& stream, ConfusedExamples* confused) override {
    return lite_evaluate(tables_, stream, confused);
  }
  int64_t bytes() const override { return tables_.bytes(); }
  bool weights_finite() const override { return tables_.all_finite(); }
  void load_weights(const std::string& path) override { tables_.load(path); }
  void write(const std::string& path, const nlohmann::json& meta,
             const std::map<std::string, std::string>& blobs, Saved what) override {
    CheckpointParts c;
    c.meta = meta;
    tables_.add_to(c);
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
  std::string training_path() const override {
    const int64_t threads = run_.plan.train.fast_path_threads;
    return fmt::format("fast path: fused SGD, {} thread{}, without LibTorch (sift-lite){}", threads,
                       threads == 1 ? "" : "s",
                       run_.plan.thread_split.empty() ? "" : " (" + run_.plan.thread_split + ")");
  }
  nlohmann::json environment(const std::string& dir) const override {
    // Training threads; no LibTorch pool.
    return run_environment({"sift-lite", "not loaded", "cpu", run_.plan.train.fast_path_threads, 1,
                            run_.plan.data.train_stream.workers, run_file(dir, kConfigFile)});
  }

 private:
  // Before a step changes them: the batch's rows as the best weights hold them. A journal
  // past a quarter of the table goes to best.ckpt instead (write_best_out), as a run that
  // changes most rows between validations would otherwise hold a second table.
  void keep_best_rows(const RawBatch& batch) {
    journal_.keep(tables_.embedding(), batch.ids.data(), static_cast<int64_t>(batch.ids.size()));
    if (journal_.bytes() > tables_.bytes() / 4) write_best_out(run_, *this);
  }
  // Swaps the best weights (the journal's rows, the output layer's copy) with the tables'.
  void swap_best() {
    const BagTables t = tables_.bag();
    journal_.swap(t.embedding);
    std::swap_ranges(best_output_.begin(), best_output_.end(), t.weight);
    std::swap_ranges(best_bias_.begin(), best_bias_.end(), t.bias);
  }

  RunCore& run_;
  FastTextTables& tables_;
  std::unique_ptr<FusedSgd> step_;
  int64_t nonfinite_in_a_row_ = 0;  // skip_batch: skipped steps since the last taken one
  // The best weights: their embedding rows that training changed since, their output layer.
  RowJournal journal_;
  std::vector<float> best_output_, best_bias_;
};

}  // namespace

const std::vector<std::string>& lite_honours() {
  // model.*: fastText's own that its table takes, one by one, so that a key added to the
  // fastText model later goes to sift-main until sift-lite takes it (model.pretrained did).
  static const std::vector<std::string> keys = [] {
    std::istringstream in(
        "run. data. tokenizer. model.type model.dim model.ngrams model.buckets model.minn "
        "model.maxn train.epochs train.batch_size train.max_steps train.loss "
        "train.loss_reduction train.log_every train.tensorboard train.checkpoint_minutes "
        "train.save_last train.on_nonfinite train.eval_every train.best_metric train.best_label "
        "train.threshold train.patience train.min_delta train.loss_scaling "
        "train.fast_path_threads train.optimizer.lr train.scheduler.");
    std::vector<std::string> out;
    for (std::string key; in >> key;) out.push_back(key);
    return out;
  }();
  return keys;
}

std::string lite_refusal(const SiftConfig& config) {
  const TrainConfig& t = config.train;
  if (config.model.type != "fasttext") return "model.type is not fasttext";
  const FastPathCase c = fast_path_case(config);
  if (std::string why = fast_path_refusal(t, c); !why.empty()) return why;
  // A restart resumes the run folder (train_command.cc), which only sift-main does.
  if (const char* r = std::getenv("SIFT_MAX_RESTARTS"); r != nullptr && std::string(r) != "0") {
    return "sift launch --max-restarts";
  }
  // ns seeds each batch's draws from LibTorch's generator (models/fasttext.h).
  if (t.loss == Loss::ns) return "train.loss ns";
  if (config.tokenizer.type == TokenizerType::sentencepiece) return "tokenizer.type sentencepiece";
  for (const std::string& key : keys_off_default(config)) {
    const auto& honours = lite_honours();
    if (std::none_of(honours.begin(), honours.end(), [&key](const std::string& h) {
          return key == h || (h.back() == '.' && key.rfind(h, 0) == 0);
        })) {
      return key;
    }
  }
  return "";
}

nlohmann::json lite_train(const SiftConfig& config, const TrainOptions& options) {
  RunCore run;
  run.plan = plan_training(config);  // every check between options, then each part once
  run.options = options;
  run.task = build_task(run.plan.data);
  check_best_label(run.plan.train, run.task.labels);
  run.dir = create_run_folder(run.plan.given, run.lock);
  write_run_text(run.dir, run.plan.given, run.task, run.plan.data);
  run.file_hashes = run_file_hashes(run.dir);
  const TextEncoder encoder = make_encoder(run.task);
  const ModelConfig& model = run.plan.model;
  const Allocating weights = allocating_weights(model);
  FastTextTables tables(encoder.num_ids(), run.task.labels.size(), model.dim, run.plan.seed,
                        run.plan.train.loss, run.task.label_counts);
  FastTextLearner learner(run, tables);
  return train_and_report(run, learner, encoder, "");
}

}  // namespace sift
