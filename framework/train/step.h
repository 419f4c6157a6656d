// One training step's parts: the next batch (agreed over the ranks), its forward and
// backward, and the optimizer step.
#pragma once

#include "datasets/batch.h"
#include "datasets/sharded_stream.h"
#include "framework/train/run.h"

namespace sift {

// The next batch. In a group: true while any rank has one (a rank out of data gets an
// empty batch), and run.loss_scale becomes the factor that makes the averaged gradient
// that of all ranks' examples together, as one process with the whole batch would
// compute it.
bool next_batch(Run& run, ShardedStream& stream, RawBatch& batch);

// One batch's forward and backward (gradients accumulate); returns its mean loss per
// example.
double accumulate_batch(Run& run, const RawBatch& batch);

// Averages gradients over the ranks, unscales, clips and steps. A step whose gradients
// overflowed under loss scaling is skipped (the weights stay) but still counts, so that
// step limits, schedules and evaluation points do not shift. A non-finite loss or
// gradient goes to the guard (nonfinite.h): an error, or under skip_batch a skipped step
// that counts the same way.
void optimizer_step(Run& run);

}  // namespace sift
