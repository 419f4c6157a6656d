#include "framework/train/fast_path.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"
#include "framework/train/fast_path_rules.h"
#include "framework/train/nonfinite.h"

namespace sift {

std::string fast_path_refusal(const Run& run) {
  const RunPlan& c = run.plan;
  FastPathCase k;
  k.model_type = c.model.type;
  k.fused_step = find_model(c.model.type).fused_sgd != nullptr;
  k.multi_label = c.data.multi_label;
  k.loss_scaling = run.scaler.enabled();
  k.device = run.device.is_cpu() ? "cpu" : run.device.str();
  k.distributed = run.dist->is_group();
  return fast_path_refusal(c.train, k);
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

bool trains_hogwild(const Run& run) {
  return run.fused != nullptr && run.plan.train.fast_path_threads > 1;
}

bool hogwild_steps(Run& run, const HogwildPlan& plan, Progress& progress) {
  const HogwildRun h{run.plan.data,
                     run.plan.train,
                     run.plan.loss.sum,
                     run.task.labels,
                     [&run] { return find_model(run.plan.model.type).fused_sgd(*run.model); },
                     run.state,
                     run.dir};
  return hogwild_epoch(h, plan, progress);
}

}  // namespace sift
