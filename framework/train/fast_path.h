// train.fast_path: the fused SGD loop (models/fused_sgd.h) in place of autograd, for the
// runs it computes exactly: plain SGD on fp32 weights on the CPU in one process, with
// the plain loss (train.loss softmax, hs, ns or ova, no weights or smoothing). Chosen
// automatically; the run's report names the path taken
// and, for autograd, why.
#pragma once

#include <string>

#include "datasets/batch.h"
#include "framework/train/hogwild.h"
#include "framework/train/run.h"

namespace sift {

// Why `run` cannot take the fused loop (the first reason found), or "" when it can.
std::string fast_path_refusal(const Run& run);

// Sets run.fused (and run.training_path, the report's words for it) when the run takes
// the fast path. Throws sift::Error when train.fast_path_threads > 1 asks for a path
// the run cannot take.
void choose_training_path(Run& run);

// One optimizer step through run.fused at learning rate `lr`: the batch's gradient, the
// non-finite guard (train.on_nonfinite), the update; counts the step like
// optimizer_step. Returns the batch's mean loss per example.
double fused_step(Run& run, const RawBatch& batch, double lr);

// Whether `run` trains Hogwild-style (the fast path with more than one thread).
bool trains_hogwild(const Run& run);

// One epoch of `run` on its Hogwild threads (hogwild_epoch over the model's weights).
bool hogwild_steps(Run& run, const HogwildPlan& plan, Progress& progress);

}  // namespace sift
