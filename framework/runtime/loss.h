// The training loss of a batch: softmax cross-entropy for single-label tasks, one
// sigmoid per label with binary cross-entropy (multi-hot targets) for multi-label ones.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "datasets/batch.h"
#include "config/config.h"

namespace sift {

struct LossOptions {
  bool multi_label = false;
  double label_smoothing = 0.0;
  bool sum = false;             // sum over the batch's examples instead of the mean
  torch::Tensor class_weights;  // single-label: weight per class; multi-label: pos_weight
};

LossOptions loss_options(const SiftConfig& config, const torch::Tensor& class_weights);

// [batch, classes] float targets, 1 for each of a record's labels (multi-label batches).
torch::Tensor multi_hot(const RawBatch& batch, int64_t classes);

// A multi-label loss sums over labels, then reduces over examples like cross-entropy,
// so that loss values and learning rates stay comparable with single-label runs.
torch::Tensor batch_loss(const torch::Tensor& logits, const RawBatch& batch,
                         const LossOptions& options);

// train.class_weights: balanced for multi-label data: pos_weight = negatives / positives
// of each label (0 for a label never seen).
torch::Tensor balanced_pos_weight(const std::vector<uint64_t>& label_counts, uint64_t records);

}  // namespace sift
