// Evaluation of the fastText learner's tables (lite_weights.h, fasttext_learner.h: the fast
// path of both programs) over a batch stream: each example's prediction, its probability
// and its loss (softmax and ns: cross-entropy; ova: the binary losses of every label; hs:
// fastText's tree search, and the binary losses along the label's path), counted as
// evaluate() (framework/runtime/evaluation.h) counts them for the LibTorch model under
// autograd. The predictions equal the LibTorch model's; losses and probabilities agree to
// float rounding (the output layer's sums run in another order; FastTextLoss.* hold them).
#pragma once

#include "datasets/sharded_stream.h"
#include "framework/runtime/base/evaluation_result.h"
#include "framework/train/base/lite_weights.h"

namespace sift {

// One pass over `batches` (single-label). `confused`: a few
// misclassified texts (batches that carry them).
Evaluation lite_evaluate(const FastTextTables& w, ShardedStream& batches,
                         ConfusedExamples* confused);

}  // namespace sift
