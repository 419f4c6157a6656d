// A batch of encoded texts through a LibTorch model, to the labels and scores `sift
// predict` prints: shared by `sift predict` and `sift serve` (tools/serve/torch_backend),
// so that a served model answers what predict prints.
#pragma once

#include <cstdint>
#include <vector>

#include "datasets/batch.h"
#include "framework/runtime/model_bundle.h"
#include "tools/sift/predict_options.h"

namespace sift::cli {

// What one text of the batch asks for (resolve_predict's k and threshold).
struct PredictQuery {
  int64_t k = 1;
  double threshold = -1.0;
};

// Single-label: the k most probable labels with probability >= threshold, best first;
// multi-label: every label over the threshold. One Predictions per text of `batch`.
std::vector<Predictions> predict_batch(ModelBundle& bundle, const RawBatch& batch,
                                       const std::vector<PredictQuery>& queries);

}  // namespace sift::cli
