// The training loss of a batch: softmax cross-entropy for single-label tasks, one
// sigmoid per label with binary cross-entropy (multi-hot targets) for multi-label ones
// and for train.loss ova (one-hot targets). train.loss hs and ns train through the
// model's own loss (ClassifierImpl::example_losses); their evaluation loss here is, for
// hs, the cross-entropy of the tree's log-probabilities (the same loss), for ns the
// one-vs-all loss over every label (ns samples its negatives only in training).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "config/config.h"
#include "datasets/batch.h"
#include "framework/runtime/base/loss_options.h"
#include "models/model.h"

namespace sift {

// The probabilities [batch, classes] of a model's scores (fp32): a sigmoid per label or the
// softmax (train.loss hs: of the tree's log-probabilities, which gives the tree's own).
torch::Tensor probabilities(const torch::Tensor& scores, bool multi_label, Loss loss);

// The training loss of a batch through the model's own output loss (train.loss hs, ns),
// reduced like batch_loss; undefined when the model has none for this loss.
torch::Tensor model_loss(ClassifierImpl& model, const ModelInput& input, const RawBatch& batch,
                         const LossOptions& options);

// [rows, classes] float targets, 1 for each of a record's labels (multi-label batches):
// the rows with a label list (unlabelled rows appended after them have none).
torch::Tensor multi_hot(const RawBatch& batch, int64_t classes);

// A multi-label loss sums over labels, then reduces over examples like cross-entropy,
// so that loss values and learning rates stay comparable with single-label runs. Only
// the rows with a label count (the mean is over them): distillation's unlabelled rows
// (label -1, after the labelled ones: RawBatch::append) add nothing; a batch without
// labelled rows has a hard loss of 0. `class_weights` (train.class_weights, undefined for
// none): single-label, a weight per class; multi-label, each label's pos_weight.
torch::Tensor batch_loss(const torch::Tensor& logits, const RawBatch& batch,
                         const LossOptions& options, const torch::Tensor& class_weights = {});

// Knowledge distillation's soft loss (Hinton et al. 2015) of student logits against a
// teacher's, both [batch, classes]: T^2 * KL(softmax(teacher/T) || softmax(student/T))
// per example; multi-label: T^2 * the KL divergence between the Bernoulli distributions
// sigmoid(teacher/T) and sigmoid(student/T), summed over labels (the BCE against the
// teacher's sigmoids less its own entropy, so 0 when the student matches). The T^2 keeps
// its gradients' scale as T changes. Reduced over examples like batch_loss: the mean, or
// with `sum` the sum.
torch::Tensor distill_loss(const torch::Tensor& student, const torch::Tensor& teacher,
                           double temperature, bool multi_label, bool sum);

// A distilled batch's loss: alpha * hard + (1 - alpha) * soft, with soft = distill_loss.
struct DistilledLoss {
  torch::Tensor total;
  torch::Tensor soft;
};
DistilledLoss distilled_loss(const torch::Tensor& hard, const torch::Tensor& student,
                             const torch::Tensor& teacher, double alpha, double temperature,
                             bool multi_label, bool sum);

// train.class_weights: balanced for multi-label data: pos_weight = negatives / positives
// of each label (0 for a label never seen).
torch::Tensor balanced_pos_weight(const std::vector<uint64_t>& label_counts, uint64_t records);

}  // namespace sift
