// The fastText model's losses on plain arrays, each written once, as fastText's Loss classes
// hold `forward` and `predict`: which output rows an example's loss reads (the fused step,
// bag_sgd), its loss, best label and probability (evaluation, lite_evaluation) and the
// labels it predicts (`sift predict`, fasttext_predictor). A new loss is one class here;
// the LibTorch model (FastTextImpl) computes the same on tensors for autograd and export.
//
// Two numerics are kept on purpose, each the one its LibTorch counterpart uses, so that
// the torch-free paths equal sift-main's: evaluation sums in double as autograd's losses
// are summed (`score`), prediction computes probabilities in float as LibTorch's softmax
// and sigmoid do (`top_k`).
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "config/enums.h"
#include "models/base/fasttext_forward.h"
#include "models/base/label_tree.h"
#include "models/base/negative_sampler.h"

namespace sift {

// The output layer over a bag's hidden vector (dim values): row r scores
// bias[r] + weight[r] . hidden. hs: one row per internal node of the label tree.
struct OutputLayer {
  const float* weight = nullptr;  // [rows, dim], row-major as torch::nn::Linear keeps it
  const float* bias = nullptr;    // [rows]
  int64_t rows = 0, dim = 0;
  float score(const float* hidden, int64_t row) const {
    return row_score(weight, bias, dim, row, hidden);
  }
};

// An example as evaluation counts it: the best label, its probability and the loss of the
// example's own label.
struct Scored {
  int64_t label = 0;
  double probability = 0.0;
  double loss = 0.0;
};

using LabelProbabilities = std::vector<std::pair<int64_t, float>>;

class FastTextLoss {
 public:
  virtual ~FastTextLoss() = default;
  // Evaluation of one example whose label is `label`.
  virtual Scored score(const OutputLayer& out, const float* hidden, int64_t label) const = 0;
  // The k most probable labels (id, probability), best first, only those with probability
  // >= threshold (threshold < 0: all).
  virtual LabelProbabilities top_k(const OutputLayer& out, const float* hidden, int64_t k,
                                   double threshold) const = 0;
  // The output rows the loss of example `index` of a batch (ns: with draw seed `seed`)
  // reads and whether each is a positive: hs the label's path, ns the label and its
  // negatives, softmax and ova every label. hs, ns and ova are binary logistic losses on them.
  virtual void targets(int64_t label, uint64_t seed, int64_t index, std::vector<int64_t>& rows,
                       std::vector<uint8_t>& positive) const = 0;
};

// train.loss `loss` over `labels` labels; hs needs the label tree, ns's targets the
// sampler and its draws per example (both are copied; evaluation and prediction of ns
// need no sampler).
struct LossShape {
  Loss loss = Loss::softmax;
  int64_t labels = 0;
  const LabelTree* tree = nullptr;           // hs
  const NegativeSampler* sampler = nullptr;  // ns
  int64_t negatives = 0;                     // ns
};
std::unique_ptr<FastTextLoss> fasttext_loss(const LossShape& shape);

// Softmax of `scores` in place, as LibTorch computes it in float: shifted by the largest.
void softmax_in_place(std::vector<float>& scores);

// The k best of `probabilities` (one per label) at or above `threshold`, best first, ties
// to the lower id.
LabelProbabilities best_labels(const std::vector<float>& probabilities, int64_t k,
                               double threshold);

}  // namespace sift
