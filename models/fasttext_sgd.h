// The fastText bag's fused SGD step (models/base/fused_sgd.h) over the LibTorch model's
// tensors: the loop of bag_sgd.h (mean of embedding rows, output layer, the loss's
// gradient, update of the output rows and of the rows the batch touched) on their memory.
#pragma once

#include <memory>

#include "models/base/fused_sgd.h"

namespace sift {

// Over a FastText model's "embedding.weight", "output.weight" and "output.bias" (fp32,
// contiguous, CPU), with its loss (hs: its tree; ns: its draws, seeded by
// negative_seed); throws sift::Error otherwise.
std::unique_ptr<FusedSgd> fasttext_sgd(ClassifierImpl& model);

}  // namespace sift
