#include "framework/train/lite_evaluation.h"

#include <cmath>
#include <vector>

namespace sift {
namespace {

// Example i's scores (the output layer over the mean of its rows), as the LibTorch model's
// forward computes them up to float rounding.
void example_scores(const FastTextTables& w, const RawBatch& batch, int64_t i,
                    std::vector<float>& hidden, std::vector<float>& scores) {
  const int64_t dim = w.dim(), begin = batch.offsets[i], end = batch.ids_end(i);
  hidden.assign(static_cast<size_t>(dim), 0.0f);
  for (int64_t k = begin; k < end; ++k) {
    const float* row = w.embedding() + batch.ids[k] * dim;
    for (int64_t d = 0; d < dim; ++d) hidden[d] += row[d];
  }
  if (end > begin) {
    for (auto& h : hidden) h /= static_cast<float>(end - begin);
  }
  scores.resize(static_cast<size_t>(w.classes()));
  for (int64_t c = 0; c < w.classes(); ++c) {
    const float* row = w.output() + c * dim;
    float z = w.bias()[c];
    for (int64_t d = 0; d < dim; ++d) z += row[d] * hidden[d];
    scores[c] = z;
  }
}

}  // namespace

Evaluation lite_evaluate(const FastTextTables& w, ShardedStream& batches,
                         ConfusedExamples* confused) {
  Evaluation result{ConfusionMatrix(w.classes()), MultiLabelCounts(0), false, 0.0, {}};
  double loss_sum = 0.0;
  RawBatch batch;
  std::vector<float> hidden, scores;
  std::vector<int64_t> predicted;
  std::vector<double> confidence;
  batches.start_epoch(1);
  while (batches.next(batch)) {
    predicted.clear();
    confidence.clear();
    for (int64_t i = 0; i < batch.size(); ++i) {
      example_scores(w, batch, i, hidden, scores);
      int64_t best = 0;
      for (int64_t c = 1; c < w.classes(); ++c) {
        if (scores[c] > scores[best]) best = c;
      }
      double total = 0.0;
      for (const float z : scores) total += std::exp(double(z) - double(scores[best]));
      loss_sum += std::log(total) + double(scores[best]) - double(scores[batch.labels[i]]);
      predicted.push_back(best);
      confidence.push_back(1.0 / total);
    }
    count_predictions(predicted.data(), confidence.data(), batch, result, confused);
  }
  if (result.examples() > 0) result.loss = loss_sum / static_cast<double>(result.examples());
  return result;
}

}  // namespace sift
