// What the training loop (train_loop.h, written once, torch-free) asks of what it trains:
// step a batch, evaluate a stream, write and read its weights, keep and restore the best,
// say whether they are finite and their bytes. Two learners: the LibTorch model stepped by
// autograd (torch_learner.h) and the fastText model's tables on plain arrays stepped by the
// fused step (fasttext_learner.h), which sift-lite trains over its own arrays and sift-main's
// fast path over the LibTorch model's tensors.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "datasets/batch.h"
#include "datasets/sharded_stream.h"
#include "datasets/text_encoder.h"
#include "framework/runtime/base/evaluation_result.h"
#include "framework/train/base/group.h"
#include "framework/train/base/progress.h"
#include "models/base/fused_sgd.h"

namespace sift {

struct RunCore;  // train_loop.h

// What a checkpoint the loop writes holds of the learner.
enum class Saved {
  last,        // last.ckpt: the weights and the learner's training state (optimizer, scale)
  best_model,  // best.ckpt from the weights in the model
  best_copy,   // best.ckpt from the copy copy_best made
};

class Learner {
 public:
  virtual ~Learner() = default;
  // The processes training together (a group of one by default).
  virtual Group& group() { return single_; }

  // Before the first step (streams of its own, training mode).
  virtual void start(const TextEncoder& /*encoder*/) {}
  // The encoder a distillation teacher reads the training texts with, or null.
  virtual const TextEncoder* teacher_encoder() const { return nullptr; }
  virtual void start_epoch() {}
  // The next batch of `stream` (in a group: true while any rank has one).
  virtual bool next_batch(ShardedStream& stream, RawBatch& batch) { return stream.next(batch); }
  struct Stepped {
    double loss = 0.0;  // the batch's mean loss per example
    bool step = false;  // an optimizer step was taken (else the batch was accumulated)
  };
  // One batch at learning rate `lr`; `logs`: the step it completes gets a metrics.csv row.
  virtual Stepped step(const RawBatch& batch, double lr, bool logs) = 0;
  // Whether batches are accumulated towards a step not yet taken.
  virtual bool accumulating() const { return false; }
  // The epoch's last, partial accumulation.
  virtual void end_steps() {}
  // The last step's gradient norm and loss scale for metrics.csv (NaN: not measured).
  virtual double grad_norm() const { return std::nan(""); }
  virtual double loss_scale() const { return std::nan(""); }
  // A fused step over the weights (for Hogwild threads), or null when steps are not fused.
  virtual std::unique_ptr<FusedSgd> make_fused() { return nullptr; }
  virtual bool fused() const { return false; }

  // One pass over `stream` summed over the group; `confused`: a few misclassified texts.
  virtual Evaluation evaluate(ShardedStream& stream, ConfusedExamples* confused) = 0;
  // What a validation's record adds (the loss scale), before it is scored.
  virtual void add_to_record(nlohmann::json& /*record*/) const {}
  // Why weights at `step` cannot be the best ("": they can).
  virtual std::string not_a_best(int64_t /*step*/) const { return ""; }

  virtual int64_t bytes() const = 0;  // in a checkpoint: what SavePolicy estimates from
  virtual bool weights_finite() const = 0;
  // Whether the best weights go to best.ckpt when training would change them (else a
  // copy is kept in memory: copy_best, restore_best_copy).
  virtual bool best_to_disk() const { return true; }
  virtual bool holds_best_copy() const { return false; }
  virtual void copy_best() {}
  virtual void drop_best_copy() {}
  virtual void restore_best_copy() {}
  // Reads the weights of the checkpoint at `path` back into the model.
  virtual void load_weights(const std::string& path) = 0;
  // This rank's own blobs in last.ckpt besides the loop's (random state, extra streams).
  virtual void add_rank_blobs(std::map<std::string, std::string>& /*blobs*/) {}
  // Writes the checkpoint `path` with `meta`, `blobs` and `what` of the learner.
  virtual void write(const std::string& path, const nlohmann::json& meta,
                     const std::map<std::string, std::string>& blobs, Saved what) = 0;
  // In a group, on the ranks that do not write: their part of the primary's write of
  // `what` (collective; run.shard: parameters gathers each layer from every rank).
  virtual void take_part_in_write(Saved /*what*/) {}

  // The report's words for how it trains ("fast path: fused SGD, 1 thread").
  virtual std::string training_path() const = 0;
  virtual int64_t skipped_steps() const { return 0; }  // loss scaling's
  // report.json's "train" additions and the log lines the loop's end adds.
  virtual void add_summary(nlohmann::json& /*train*/, Progress& /*progress*/) {}
  virtual void add_report(nlohmann::json& /*train*/, std::string& /*text*/) const {}
  // report.json's "environment" of run folder `dir`.
  virtual nlohmann::json environment(const std::string& dir) const = 0;

 private:
  Group single_;
};

// One step of a fused SGD step `fused` (models/base/fused_sgd.h), as both learners take it: the
// batch's gradient, the non-finite guard (train.on_nonfinite), the update, the step
// counted. `in_a_row`: the guard's skipped steps in a row. Returns the mean loss per example.
double fused_sgd_step(FusedSgd& fused, const RawBatch& batch, double lr, RunCore& run,
                      int64_t& in_a_row);

// Watches the loop and adds to it: sift-main's profiler and distillation's note. Each
// hook runs on every rank.
class LoopObserver {
 public:
  virtual ~LoopObserver() = default;
  // The loop starts (train.log is open), before the first step.
  virtual void start(Progress& /*progress*/) {}
  virtual void before_step(int64_t /*step*/) {}
  // After a step, before the progress line is updated.
  virtual void after_step(Progress& /*progress*/) {}
  // The loop ended at `step`, before its ending lines.
  virtual void end(int64_t /*step*/) {}
  // report.json's "train" additions.
  virtual void add_summary(nlohmann::json& /*train*/, Progress& /*progress*/) {}
};

}  // namespace sift
