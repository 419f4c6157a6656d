#include "framework/train/step.h"

#include <cmath>

#include "framework/runtime/collate.h"
#include "framework/runtime/loss.h"
#include "framework/train/distributed_training.h"
#include "framework/train/max_norm.h"
#include "framework/train/nonfinite.h"
#include "models/autocast.h"

namespace sift {

bool next_batch(Run& run, ShardedStream& stream, RawBatch& batch) {
  const bool has = !run.data_done && stream.next(batch);
  if (!has) {
    run.data_done = true;
    batch.clear();
  }
  const BatchAgreement all = run.dist->agree_on_batch(has, batch.size());
  run.loss_scale = rank_loss_scale(run.config.train.loss_reduction, batch.size(), all.examples,
                                   run.dist->world_size());
  return all.any;
}

double accumulate_batch(Run& run, const RawBatch& batch) {
  if (batch.size() == 0) return 0.0;  // a rank out of data: it adds zero gradients
  const auto& t = run.config.train;
  torch::Tensor logits;
  {
    AutocastGuard autocast(t.precision, run.device);
    logits = run.model->forward(to_input(batch, run.task.encoder.kind, run.device));
  }
  logits = logits.to(torch::kFloat32);  // the loss in fp32, whatever autocast produced
  auto loss = batch_loss(logits, batch, loss_options(run.config, run.class_weights));
  const torch::Tensor scaled =
      run.scaler.scale_loss(run.loss_scale != 1.0 ? loss * run.loss_scale : loss);
  (t.accumulate > 1 ? scaled / static_cast<double>(t.accumulate) : scaled).backward();
  const double value = loss.item<double>();
  run.losses_finite = run.losses_finite && std::isfinite(value);
  return value / (t.loss_reduction == LossReduction::sum ? batch.size() : 1);
}

void optimizer_step(Run& run) {
  run.dist->average_gradients(*run.model);
  const bool finite = run.scaler.unscale(run.model->parameters());
  run.scaler.update(finite);
  // Loss scaling's overflow skips come first; the guard sees what would reach the weights.
  const bool take = finite && nonfinite_guard(run, run.losses_finite);
  run.losses_finite = true;
  if (take) {
    if (run.config.train.clip_norm > 0) {
      torch::nn::utils::clip_grad_norm_(run.model->parameters(), run.config.train.clip_norm);
    }
    run.optimizer->step();
    if (run.config.train.max_norm > 0) apply_max_norm(*run.model, run.config.train.max_norm);
  }
  run.optimizer->zero_grad();
  ++run.state.step;
}

}  // namespace sift
