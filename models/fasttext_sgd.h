// The fastText bag's fused SGD step (models/fused_sgd.h), the loop fastText itself runs:
// mean of embedding rows, linear layer, softmax, cross-entropy gradient, update of the
// output layer and of the rows the batch touched.
#pragma once

#include <memory>

#include "models/fused_sgd.h"

namespace sift {

// Over a FastText model's "embedding.weight", "output.weight" and "output.bias" (fp32,
// contiguous, CPU); throws sift::Error otherwise.
std::unique_ptr<FusedSgd> fasttext_sgd(ClassifierImpl& model);

}  // namespace sift
