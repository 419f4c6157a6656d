#include "framework/train/base/divergence.h"

#include <fmt/format.h>

#include <filesystem>

#include "framework/runtime/base/run_folder.h"

namespace sift {

std::string nonfinite_advice() {
  return "try a lower train.optimizer.lr, train.loss_reduction: mean, or train.clip_norm "
         "(e.g. 1.0)";
}

bool step_applies(bool finite, OnNonfinite policy, const char* checked, int64_t step, int64_t epoch,
                  const std::string& run_dir, int64_t& skipped, int64_t& in_a_row) {
  if (finite) {
    in_a_row = 0;
    return true;
  }
  if (policy == OnNonfinite::stop) {
    const bool saved = std::filesystem::exists(run_file(run_dir, kLastCheckpointFile));
    throw Error(fmt::format(
        "training diverged: non-finite (NaN/inf) {} at step {} (epoch {}); stopped before the "
        "update, {}; {}",
        checked, step, epoch,
        saved ? "last.ckpt keeps the last saved state" : "no checkpoint was saved before it",
        nonfinite_advice()));
  }
  ++skipped;
  if (++in_a_row >= kMaxSkippedBatchesInARow) {
    throw Error(fmt::format(
        "training diverged: {} batches in a row with a non-finite (NaN/inf) {} were skipped "
        "(train.on_nonfinite: skip_batch), the last at step {} (epoch {}); {}",
        in_a_row, checked, step, epoch, nonfinite_advice()));
  }
  return false;
}

Error diverged_weights(int64_t step, int64_t epoch, const std::string& what) {
  return Error(fmt::format(
      "training diverged: the weights hold NaN/inf at step {} (epoch {}); {} not written, "
      "the run folder keeps the last good one; {}",
      step, epoch, what, nonfinite_advice()));
}

}  // namespace sift
