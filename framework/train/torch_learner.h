// sift-main's learner (learner.h): the LibTorch model of a Run, stepped by autograd
// (step.h: forward, backward, the optimizer, the non-finite guard, loss scaling, pruning)
// or by its fused SGD step (fast_path.h), evaluated by evaluate() summed over the ranks,
// and written to checkpoints with its optimizer, random state and pruning masks.
#pragma once

#include "framework/train/learner.h"
#include "framework/train/run.h"

namespace sift {

class TorchLearner : public Learner {
 public:
  explicit TorchLearner(Run& run) : run_(run) {}
  Group& group() override { return *run_.dist; }

  void start(const TextEncoder& encoder) override;
  const TextEncoder* teacher_encoder() const override;
  void start_epoch() override { run_.data_done = false; }
  bool next_batch(ShardedStream& stream, RawBatch& batch) override;
  Stepped step(const RawBatch& batch, double lr, bool logs) override;
  bool accumulating() const override { return micro_ > 0; }
  void end_steps() override;
  double grad_norm() const override { return run_.grad_norm; }
  double loss_scale() const override;
  std::unique_ptr<FusedSgd> make_fused() override;
  bool fused() const override { return run_.fused != nullptr; }

  Evaluation evaluate(ShardedStream& stream, ConfusedExamples* confused) override;
  void add_to_record(nlohmann::json& record) const override;
  std::string not_a_best(int64_t step) const override;

  int64_t bytes() const override;
  bool weights_finite() const override;
  bool best_to_disk() const override;
  bool holds_best_copy() const override { return !run_.best_weights.empty(); }
  void copy_best() override;
  void drop_best_copy() override { run_.best_weights.clear(); }
  void restore_best_copy() override;
  void load_weights(const std::string& path) override;
  void add_rank_blobs(std::map<std::string, std::string>& blobs) override;
  void write(const std::string& path, const nlohmann::json& meta,
             const std::map<std::string, std::string>& blobs, Saved what) override;

  std::string training_path() const override { return run_.training_path; }
  int64_t skipped_steps() const override { return run_.scaler.skipped_steps(); }
  void add_summary(nlohmann::json& train, Progress& progress) override;
  void add_report(nlohmann::json& train, std::string& text) const override;
  nlohmann::json environment(const std::string& dir) const override;

 private:
  Run& run_;
  int64_t micro_ = 0;  // batches accumulated since the last optimizer step
};

}  // namespace sift
