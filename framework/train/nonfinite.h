// The non-finite guard (train.on_nonfinite): a NaN/inf loss or gradient either stops the
// run with an error naming the step and what to try, before the update reaches the
// weights, or (skip_batch) skips that update. Loss scaling's own skipped steps (fp16
// overflow, framework/train/precision.h) are not its concern.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "framework/train/base/divergence.h"
#include "framework/train/run.h"

namespace sift {

// Whether every gradient of `parameters` is finite (sparse ones: their values).
bool gradients_finite(const std::vector<torch::Tensor>& parameters);
// Whether every element of `parameters` is finite.
bool tensors_finite(const std::vector<torch::Tensor>& tensors);

// Decides, the same on every rank, whether the optimizer step about to be taken may go
// ahead: `loss_finite` is this rank's losses since the last step, the gradients are the
// averaged ones. False: skip it (skip_batch). Throws sift::Error under stop, or after
// kMaxSkippedBatchesInARow skips in a row.
bool nonfinite_guard(Run& run, bool loss_finite);

}  // namespace sift
