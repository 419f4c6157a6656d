// The fastText model's forward on plain arrays, written once for training (bag_sgd),
// evaluation (lite_evaluation) and `sift predict` (fasttext_predictor): the bag's mean of
// embedding rows and an output row's score. Inline: they are the inner loops of the fused
// step, and each caller keeps the order of its sums, which the bit-equal tests pin down.
#pragma once

#include <cstdint>

namespace sift {

// The fastText model's tensors by the names FastTextImpl gives them (its "embedding" and
// "output" modules, hs's buffer): the one spelling of them for checkpoints, exports, the
// torch-free trainer and reader, and `sift import fasttext`.
inline constexpr const char* kFastTextTable = "embedding.weight";
inline constexpr const char* kFastTextOutput = "output.weight";
inline constexpr const char* kFastTextBias = "output.bias";
inline constexpr const char* kFastTextLabelCounts = "label_counts";

// hidden = the mean of `table`'s rows ids[0..n) (dim values each), as EmbeddingBag's mean
// computes it: the rows summed in order, then divided by their number.
inline void bag_mean(const float* table, int64_t dim, const int64_t* ids, int64_t n,
                     float* hidden) {
  for (int64_t d = 0; d < dim; ++d) hidden[d] = 0.0f;
  for (int64_t k = 0; k < n; ++k) {
    const float* row = table + ids[k] * dim;
    for (int64_t d = 0; d < dim; ++d) hidden[d] += row[d];
  }
  if (n > 0) {
    const float count = static_cast<float>(n);
    for (int64_t d = 0; d < dim; ++d) hidden[d] /= count;
  }
}

// Output row `row`'s score over `hidden`: its bias, then the products in order, as
// FastTextImpl::top_k scores a tree node.
inline float row_score(const float* weight, const float* bias, int64_t dim, int64_t row,
                       const float* hidden) {
  const float* w = weight + row * dim;
  float z = bias[row];
  for (int64_t d = 0; d < dim; ++d) z += w[d] * hidden[d];
  return z;
}

}  // namespace sift
