#include "framework/train/fast_path.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"
#include "framework/train/nonfinite.h"

namespace sift {

std::string fast_path_refusal(const Run& run) {
  const RunPlan& c = run.plan;
  const auto& t = c.train;
  const auto& o = t.optimizer;
  if (t.fast_path == FastPath::off) return "train.fast_path: off";
  if (!find_model(c.model.type).fused_sgd) {
    return fmt::format("model.type {} has no fused loop", c.model.type);
  }
  if (o.type != OptimizerType::sgd) {
    return fmt::format("train.optimizer.type {}", to_string(o.type));
  }
  if (o.momentum > 0) return "train.optimizer.momentum > 0";
  if (o.weight_decay > 0) return "train.optimizer.weight_decay > 0";
  if (t.precision != Precision::fp32)
    return fmt::format("train.precision {}", to_string(t.precision));
  if (run.scaler.enabled()) return "train.loss_scaling";
  if (!run.device.is_cpu()) return fmt::format("run.device {}", run.device.str());
  if (run.dist->is_group()) return "distributed training";
  if (c.data.multi_label) return "data.multi_label";
  if (!t.class_weights.empty()) return "train.class_weights";
  if (t.label_smoothing > 0) return "train.label_smoothing > 0";
  if (t.clip_norm > 0) return "train.clip_norm > 0";
  if (t.max_norm > 0) return "train.max_norm > 0";
  if (t.accumulate > 1) return "train.accumulate > 1";
  if (!t.freeze.empty()) return "train.freeze";
  if (!t.distill.teacher.empty()) return "train.distill.teacher";
  if (!t.prune.structure.empty()) return "train.prune";
  return "";
}

void choose_training_path(Run& run) {
  const std::string refusal = fast_path_refusal(run);
  const int64_t threads = run.plan.train.fast_path_threads;
  if (!refusal.empty()) {
    if (threads > 1) {
      throw Error(fmt::format(
          "train.fast_path_threads: {} threads train only on the fast path, which this run "
          "does not take ({}); set it to 1",
          threads, refusal));
    }
    run.fused.reset();
    run.training_path = fmt::format("autograd ({})", refusal);
    return;
  }
  run.fused = find_model(run.plan.model.type).fused_sgd(*run.model);
  run.training_path =
      fmt::format("fast path: fused SGD, {} thread{}", threads, threads == 1 ? "" : "s");
}

double fused_step(Run& run, const RawBatch& batch, double lr) {
  const bool sum = run.plan.loss.sum;
  const double n = static_cast<double>(batch.size());
  PhaseTimer timer(run.phases, Phase::fused);
  const double loss = run.fused->gradient(batch, sum ? 1.0 : 1.0 / n);
  if (nonfinite_guard(run, std::isfinite(loss))) run.fused->apply(batch, lr);
  ++run.state.step;
  return loss / n;
}

}  // namespace sift
