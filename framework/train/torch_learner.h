// sift-main's learners (learner.h). The LibTorch model of a Run stepped by autograd
// (torch_learner.cc: forward, backward, the optimizer, the non-finite guard, loss scaling,
// pruning), evaluated by evaluate() summed over the ranks, and written to checkpoints with
// its optimizer, random state and pruning masks. On the fast path (fast_path.h): the
// fastText learner (fasttext_learner.h) over the model's tensors, with LibTorch's random
// state in last.ckpt.
#pragma once

#include <memory>

#include "framework/train/base/learner.h"
#include "framework/train/run.h"

namespace sift {

// The learner over `run`'s model and optimizer (`run` outlives it): the fastText learner
// when run.fused, else autograd's.
std::unique_ptr<Learner> torch_learner(Run& run);

}  // namespace sift
