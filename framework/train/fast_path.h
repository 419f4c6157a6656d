// train.fast_path: the fused SGD loop (models/base/fused_sgd.h) in place of autograd, for the
// runs it computes exactly: plain SGD on fp32 weights on the CPU in one process, with
// the plain loss (train.loss softmax, hs, ns or ova, no weights or smoothing). Chosen
// automatically; the run's report names the path taken
// and, for autograd, why.
#pragma once

#include <string>

#include "framework/train/run.h"

namespace sift {

// Sets run.fused (and run.training_path, the report's words for it) when the run takes
// the fast path (run.plan.fast_path_refusal is "", decided once with the plan). Throws sift::Error
// when train.fast_path_threads > 1 asks for a path the run cannot take.
void choose_training_path(Run& run);

}  // namespace sift
