// What every path says of a diverging run (train.on_nonfinite): the LibTorch guard
// (nonfinite.h), Hogwild threads and the torch-free trainer alike.
#pragma once

#include <cstdint>
#include <string>

#include "config/enums.h"
#include "core/error.h"

namespace sift {

// skip_batch gives up after this many skipped batches in a row: by then the weights or
// the learning rate are the trouble, not one bad batch, and every later batch would be
// skipped as well, training nothing while looking busy.
constexpr int64_t kMaxSkippedBatchesInARow = 100;

// The advice the guard's errors end with.
std::string nonfinite_advice();

// Whether a step applies a batch whose `checked` values ("loss or gradient", "loss") are
// `finite`. A non-finite batch is skipped and counted in `skipped` (skip_batch), or ends
// the run: on stop, or at kMaxSkippedBatchesInARow in a row. `step` is the step being
// taken; `run_dir`'s last.ckpt, when there is one, keeps the last saved state.
bool step_applies(bool finite, OnNonfinite policy, const char* checked, int64_t step, int64_t epoch,
                  const std::string& run_dir, int64_t& skipped, int64_t& in_a_row);

// The error of weights that hold NaN/inf at `step` (`epoch`), so `what` is not written.
Error diverged_weights(int64_t step, int64_t epoch, const std::string& what);

}  // namespace sift
