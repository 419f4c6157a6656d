#include "framework/train/learner.h"

#include <cmath>

#include "framework/train/divergence.h"
#include "framework/train/train_loop.h"

namespace sift {

double Learner::grad_norm() const { return std::nan(""); }
double Learner::loss_scale() const { return std::nan(""); }

double fused_sgd_step(FusedSgd& fused, const RawBatch& batch, double lr, RunCore& run,
                      int64_t& in_a_row) {
  const double n = static_cast<double>(batch.size());
  const bool sum = run.train->loss_reduction == LossReduction::sum;
  PhaseTimer timer(run.phases, Phase::fused);
  const double loss = fused.gradient(batch, sum ? 1.0 : 1.0 / n);
  // The step being taken, as the log counts them.
  if (step_applies(std::isfinite(loss), run.train->on_nonfinite, "loss or gradient",
                   run.state.step + 1, run.state.epoch, run.dir, run.state.skipped_batches,
                   in_a_row)) {
    fused.apply(batch, lr);
  }
  ++run.state.step;
  return loss / n;
}

}  // namespace sift
