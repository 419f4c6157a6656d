// The LibTorch fastText model's tensors as plain tables (models/base/bag_sgd.h): what the
// fused SGD step updates in place and the fastText learner (framework/train/base/
// fasttext_learner.h) evaluates and saves on sift-main's fast path.
#pragma once

#include "models/base/bag_sgd.h"

namespace sift {

// A view of a model's bag ("embedding.weight", "output.weight" and "output.bias": fp32,
// contiguous, CPU) as the fused step reads it, with a FastText model's loss (hs: its
// tree; ns: its sampler and draws, seeded by negative_seed); throws sift::Error otherwise.
// Valid while the model keeps those tensors.
BagTables bag_tables_of(ClassifierImpl& model);

}  // namespace sift
