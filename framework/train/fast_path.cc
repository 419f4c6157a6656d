#include "framework/train/fast_path.h"

#include <fmt/format.h>

#include "core/error.h"
#include "framework/train/base/fast_path_rules.h"

namespace sift {

std::string fast_path_refusal(const Run& run) {
  const RunPlan& c = run.plan;
  FastPathCase k;
  k.model_type = c.model.type;
  k.fused_step = find_model(c.model.type).bag_tables != nullptr;
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
    run.fused = false;
    run.training_path = fmt::format("autograd ({})", refusal);
    return;
  }
  run.fused = true;
  const std::string& split = run.plan.thread_split;
  run.training_path = fmt::format("fast path: fused SGD, {} thread{}{}", threads,
                                  threads == 1 ? "" : "s", split.empty() ? "" : " (" + split + ")");
}

}  // namespace sift
