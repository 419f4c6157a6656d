#include "framework/train/step.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "core/error.h"
#include "framework/runtime/collate.h"
#include "framework/runtime/loss.h"
#include "framework/train/distill.h"
#include "framework/train/distributed_training.h"
#include "framework/train/max_norm.h"
#include "framework/train/nonfinite.h"
#include "models/autocast.h"

namespace sift {

namespace {

// Appends each transfer stream's next batch (train.distill.unlabeled, augment) to a
// labelled one; a stream that ends starts its next epoch.
void append_transfer(Run& run, RawBatch& batch) {
  RawBatch more;
  for (auto& t : run.transfer) {
    if (!t.stream->next(more)) {
      t.stream->start_epoch(t.stream->epoch() + 1);
      if (!t.stream->next(more)) {
        throw Error(fmt::format("train.distill.{}: {}",
                                t.name == "augment" ? "augment.copies" : t.name,
                                empty_split_message("distillation's " + t.name, *t.stream)));
      }
    }
    batch.append(more);
  }
}

}  // namespace

bool next_batch(Run& run, ShardedStream& stream, RawBatch& batch) {
  const bool has = !run.data_done && stream.next(batch);
  if (!has) {
    run.data_done = true;
    batch.clear();
  } else {
    append_transfer(run, batch);
  }
  const BatchAgreement all = run.dist->agree_on_batch(has, batch.size());
  run.loss_scale = rank_loss_scale(run.plan.train.loss_reduction, batch.size(), all.examples,
                                   run.dist->world_size());
  return all.any;
}

namespace {

// alpha * hard + (1 - alpha) * soft (train.distill); counts the soft loss for metrics.csv.
torch::Tensor with_distillation(Run& run, const torch::Tensor& hard, const torch::Tensor& logits,
                                const torch::Tensor& teacher, int64_t examples) {
  const auto& d = run.plan.train.distill;
  const bool sum = run.plan.loss.sum;
  const DistilledLoss loss =
      distilled_loss(hard, logits, teacher, d.alpha, d.temperature, run.plan.data.multi_label, sum);
  const double soft = loss.soft.item<double>() / (sum ? static_cast<double>(examples) : 1.0);
  run.step_log.count_distill(examples, soft);
  return loss.total;
}

}  // namespace

double accumulate_batch(Run& run, const RawBatch& batch) {
  if (batch.size() == 0) return 0.0;  // a rank out of data: it adds zero gradients
  const auto& t = run.plan.train;
  std::optional<PhaseTimer> timer(std::in_place, run.phases, Phase::copy);
  const ModelInput input = to_input(batch, run.task.encoder.kind, run.device);
  torch::Tensor teacher;
  if (run.teacher) {
    timer.emplace(run.phases, Phase::teacher);
    teacher = teacher_logits(*run.teacher, batch, run.plan.precision.autocast, run.device);
  }
  timer.emplace(run.phases, Phase::forward);
  torch::Tensor logits, loss;
  {
    AutocastGuard autocast(run.plan.precision.autocast, run.device);
    // train.loss hs, ns: the output layer's own loss over the rows it touches.
    loss = model_loss(*run.model, input, batch, run.plan.loss);
    if (!loss.defined()) logits = run.model->forward(input);
  }
  if (!loss.defined()) {
    logits = logits.to(torch::kFloat32);  // the loss in fp32, whatever autocast produced
    loss = batch_loss(logits, batch, run.plan.loss);
    if (run.teacher) loss = with_distillation(run, loss, logits, teacher, batch.size());
  }
  timer.emplace(run.phases, Phase::backward);
  const torch::Tensor scaled =
      run.scaler.scale_loss(run.loss_scale != 1.0 ? loss * run.loss_scale : loss);
  (t.accumulate > 1 ? scaled / static_cast<double>(t.accumulate) : scaled).backward();
  const double value = loss.item<double>();  // on a GPU: waits for the backward
  run.losses_finite = run.losses_finite && std::isfinite(value);
  return value / (run.plan.loss.sum ? batch.size() : 1);
}

namespace {

// The gradients' global L2 norm, as clip_grad_norm_ computes it (sparse ones too).
double gradient_norm(torch::nn::Module& model) {
  double squares = 0.0;
  for (const auto& p : model.parameters()) {
    if (!p.grad().defined()) continue;
    const double n = p.grad().norm().item<double>();
    squares += n * n;
  }
  return std::sqrt(squares);
}

}  // namespace

void optimizer_step(Run& run) {
  {
    PhaseTimer timer(run.phases, Phase::allreduce);
    run.dist->average_gradients(*run.model);
  }
  PhaseTimer timer(run.phases, Phase::optimizer);
  const bool finite = run.scaler.unscale(run.model->parameters());
  run.scaler.update(finite);
  // Loss scaling's overflow skips come first; the guard sees what would reach the weights.
  const bool take = finite && nonfinite_guard(run, run.losses_finite);
  run.losses_finite = true;
  run.grad_norm = std::nan("");
  if (take) {
    if (run.pruner) run.pruner->mask_gradients();  // before clipping measures them
    if (run.plan.train.clip_norm > 0) {
      run.grad_norm =
          torch::nn::utils::clip_grad_norm_(run.model->parameters(), run.plan.train.clip_norm);
    } else if (run.log_this_step) {
      // Only on metrics.csv's steps: a pass over every gradient (80 MB for fastText's tables).
      run.grad_norm = gradient_norm(*run.model);
    }
    run.optimizer->step();
    if (run.pruner) run.pruner->apply();
    if (run.plan.train.max_norm > 0) apply_max_norm(*run.model, run.plan.train.max_norm);
  }
  run.optimizer->zero_grad();
  ++run.state.step;
  if (run.pruner) run.pruner->update(run.state.step);
}

}  // namespace sift
