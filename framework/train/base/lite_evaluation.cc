#include "framework/train/base/lite_evaluation.h"

#include <cmath>
#include <vector>

#include "models/base/fasttext_forward.h"

namespace sift {
namespace {

// Output row `row`'s score over `hidden` (up to float rounding: the sums run in another
// order than LibTorch's).
float row_score(const FastTextTables& w, int64_t row, const std::vector<float>& hidden) {
  return sift::row_score(w.output(), w.bias(), w.dim(), row, hidden.data());
}

// Every output row's score over `hidden`.
void scores_of(const FastTextTables& w, const std::vector<float>& hidden,
               std::vector<float>& scores) {
  scores.resize(static_cast<size_t>(w.classes()));
  for (int64_t c = 0; c < w.classes(); ++c) scores[c] = row_score(w, c, hidden);
}

// Example i's prediction, its probability and its loss, from `scores` (hidden: the mean of
// its rows) as the LibTorch model's evaluation takes them.
struct Scored {
  int64_t label = 0;
  double probability = 0.0;
  double loss = 0.0;
};

int64_t argmax(const std::vector<float>& scores) {
  int64_t best = 0;
  for (size_t c = 1; c < scores.size(); ++c) {
    if (scores[c] > scores[static_cast<size_t>(best)]) best = static_cast<int64_t>(c);
  }
  return best;
}

// Softmax and cross-entropy (F::cross_entropy, summed).
Scored softmax_scored(const std::vector<float>& scores, int64_t label) {
  const int64_t best = argmax(scores);
  const double top = scores[best];
  double total = 0.0;
  for (const float z : scores) total += std::exp(double(z) - top);
  return {best, 1.0 / total, std::log(total) + top - double(scores[label])};
}

// ova: sigmoid of the best score, and every label's binary loss against one-hot targets
// (loss.cc: softplus summed, less the label's own score).
Scored ova_scored(const std::vector<float>& scores, int64_t label) {
  const int64_t best = argmax(scores);
  double softplus = 0.0;
  for (const float z : scores) softplus -= log_sigmoid(-double(z));
  return {best, 1.0 / (1.0 + std::exp(-double(scores[best]))), softplus - double(scores[label])};
}

// hs: the most probable label by fastText's tree search, and the binary losses along the
// label's path (FastTextImpl::top_k, example_losses).
Scored hs_scored(const FastTextTables& w, const std::vector<float>& hidden, int64_t label) {
  auto score = [&](int64_t row) { return double(row_score(w, row, hidden)); };
  const auto best = tree_top_k(w.tree(), score, 1, 0.0);
  Scored s;
  if (!best.empty()) s = {best[0].second, std::exp(best[0].first), 0.0};
  const auto& path = w.tree().paths[static_cast<size_t>(label)];
  const auto& code = w.tree().codes[static_cast<size_t>(label)];
  for (size_t j = 0; j < path.size(); ++j) {
    s.loss -= log_sigmoid(code[j] ? score(path[j]) : -score(path[j]));
  }
  return s;
}

}  // namespace

Evaluation lite_evaluate(const FastTextTables& w, ShardedStream& batches,
                         ConfusedExamples* confused) {
  Evaluation result{ConfusionMatrix(w.labels()), MultiLabelCounts(0), false, 0.0, {}};
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
      hidden.resize(static_cast<size_t>(w.dim()));
      bag_mean(w.embedding(), w.dim(), batch.ids.data() + batch.offsets[i],
               batch.ids_end(i) - batch.offsets[i], hidden.data());
      const int64_t label = batch.labels[i];
      if (w.loss() != Loss::hs) scores_of(w, hidden, scores);  // hs searches its tree instead
      const Scored s = w.loss() == Loss::hs    ? hs_scored(w, hidden, label)
                       : w.loss() == Loss::ova ? ova_scored(scores, label)
                                               : softmax_scored(scores, label);
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
