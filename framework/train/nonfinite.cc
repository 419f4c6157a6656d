#include "framework/train/nonfinite.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/error.h"
#include "framework/runtime/all_finite.h"
#include "framework/runtime/run_folder.h"

namespace sift {

bool gradients_finite(const std::vector<torch::Tensor>& parameters) {
  torch::NoGradGuard no_grad;
  for (const auto& p : parameters) {
    const torch::Tensor& g = p.grad();
    if (!g.defined()) continue;
    const torch::Tensor values = g.is_sparse() ? g._values() : g;
    if (!torch::isfinite(values).all().item<bool>()) return false;
  }
  return true;
}

bool tensors_finite(const std::vector<torch::Tensor>& tensors) {
  torch::NoGradGuard no_grad;
  for (const auto& t : tensors) {
    if (t.is_floating_point() && !all_finite(t)) return false;
  }
  return true;
}

bool nonfinite_guard(Run& run, bool loss_finite) {
  // The gradients are averaged already, so they agree over the ranks; the losses do not,
  // hence one flag summed over the group (a group of one: no collective).
  std::vector<int64_t> bad{loss_finite && gradients_finite(run.model->parameters()) ? 0 : 1};
  if (run.dist->is_group()) run.dist->sum(bad);
  TrainingState& s = run.state;
  if (bad[0] == 0) {
    run.nonfinite_in_a_row = 0;
    return true;
  }
  const int64_t step = s.step + 1;  // the step being taken, as the log counts them
  if (run.plan.train.on_nonfinite == OnNonfinite::stop) {
    const bool saved = std::filesystem::exists(run_file(run.dir, kLastCheckpointFile));
    throw Error(fmt::format(
        "training diverged: non-finite (NaN/inf) loss or gradient at step {} (epoch {}); "
        "stopped before the update, {}; {}",
        step, s.epoch,
        saved ? "last.ckpt keeps the last saved state" : "no checkpoint was saved before it",
        nonfinite_advice()));
  }
  ++s.skipped_batches;
  if (++run.nonfinite_in_a_row >= kMaxSkippedBatchesInARow) {
    throw Error(fmt::format(
        "training diverged: {} batches in a row with a non-finite (NaN/inf) loss or gradient "
        "were skipped (train.on_nonfinite: skip_batch), the last at step {} (epoch {}); {}",
        run.nonfinite_in_a_row, step, s.epoch, nonfinite_advice()));
  }
  return false;
}

void check_weights_finite(Run& run, const std::string& what) {
  if (tensors_finite(run.model->parameters())) return;
  throw Error(fmt::format(
      "training diverged: the weights hold NaN/inf at step {} (epoch {}); {} not written, "
      "the run folder keeps the last good one; {}",
      run.state.step, run.state.epoch, what, nonfinite_advice()));
}

}  // namespace sift
