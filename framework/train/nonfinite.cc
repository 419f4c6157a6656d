#include "framework/train/nonfinite.h"

#include <fmt/format.h>

#include "core/error.h"
#include "framework/runtime/all_finite.h"
#include "framework/train/base/divergence.h"

namespace sift {

bool gradients_finite(const std::vector<torch::Tensor>& parameters) {
  torch::NoGradGuard no_grad;
  for (const auto& p : parameters) {
    const torch::Tensor& g = p.grad();
    if (!g.defined()) continue;
    const torch::Tensor values = g.is_sparse() ? g._values() : g;
    // all_finite: torch::isfinite allocated a bool per gradient (11M for BERT-Mini).
    if (!all_finite(values)) return false;
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
  // run.shard: parameters: the layers' gradients are in this rank's slices.
  const bool finite = loss_finite && gradients_finite(run.model->parameters()) &&
                      (!run.layers || tensors_finite(run.layers->gradients(true)));
  std::vector<int64_t> bad{finite ? 0 : 1};
  if (run.dist->is_group()) run.dist->sum(bad);
  // The step being taken, as the log counts them.
  return step_applies(bad[0] == 0, run.plan.train.on_nonfinite, "loss or gradient",
                      run.state.step + 1, run.state.epoch, run.dir, run.state.skipped_batches,
                      run.nonfinite_in_a_row);
}

}  // namespace sift
