#include "framework/train/base/lite_evaluation.h"

#include <vector>

#include "models/base/fasttext_forward.h"
#include "models/base/fasttext_loss.h"

namespace sift {

Evaluation lite_evaluate(const FastTextTables& w, ShardedStream& batches,
                         ConfusedExamples* confused) {
  Evaluation result{ConfusionMatrix(w.labels()), MultiLabelCounts(0), false, 0.0, {}};
  const auto loss = fasttext_loss({w.loss(), w.classes(), &w.tree(), nullptr, 0});
  const OutputLayer out{w.output(), w.bias(), w.classes(), w.dim()};
  double loss_sum = 0.0;
  RawBatch batch;
  std::vector<float> hidden(static_cast<size_t>(w.dim()));
  std::vector<int64_t> predicted;
  std::vector<double> confidence;
  batches.start_epoch(1);
  while (batches.next(batch)) {
    predicted.clear();
    confidence.clear();
    for (int64_t i = 0; i < batch.size(); ++i) {
      bag_mean(w.embedding(), w.dim(), batch.ids.data() + batch.offsets[i],
               batch.ids_end(i) - batch.offsets[i], hidden.data());
      const Scored s = loss->score(out, hidden.data(), batch.labels[i]);
      loss_sum += s.loss;
      predicted.push_back(s.label);
      confidence.push_back(s.probability);
    }
    count_predictions(predicted.data(), confidence.data(), batch, result, confused);
  }
  if (result.examples() > 0) result.loss = loss_sum / static_cast<double>(result.examples());
  return result;
}

}  // namespace sift
