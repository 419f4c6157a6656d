// The fastText model served without LibTorch: FastTextPredictor (the forward `sift
// predict` runs in sift-lite) behind the ModelBackend interface.
#pragma once

#include <memory>
#include <string>

#include "framework/runtime/base/fasttext_predictor.h"
#include "tools/serve/model_backend.h"

namespace sift::serve {

// One text's predictions as `sift predict` prints them for a fastText model: the k most
// probable labels at or over `threshold` (single-label), or every label over it.
cli::Predictions fasttext_predictions(const FastTextPredictor& model,
                                      const std::vector<int64_t>& ids, int64_t k, double threshold);

// The run folder's or export's fastText model, or nullptr with `why` when this path does
// not serve it (FastTextPredictor::open's reasons).
std::unique_ptr<ModelBackend> open_fasttext_backend(const std::string& path, std::string* why);

}  // namespace sift::serve
