// sift-main's learner (learner.h): the LibTorch model of a Run, stepped by autograd
// (torch_learner.cc: forward, backward, the optimizer, the non-finite guard, loss scaling, pruning)
// or by its fused SGD step (fast_path.h), evaluated by evaluate() summed over the ranks,
// and written to checkpoints with its optimizer, random state and pruning masks.
#pragma once

#include <memory>

#include "framework/train/base/learner.h"
#include "framework/train/run.h"

namespace sift {

// The learner over `run`'s model and optimizer (`run` outlives it).
std::unique_ptr<Learner> torch_learner(Run& run);

}  // namespace sift
