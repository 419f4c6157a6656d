#include "framework/train/fast_path.h"

#include <fmt/format.h>

#include "core/error.h"

namespace sift {

void choose_training_path(Run& run) {
  const std::string& refusal = run.plan.fast_path_refusal;
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
