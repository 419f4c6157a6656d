// The loss a run trains with, as the config gives it: torch-free, so that a run's plan
// (framework/train/base/run_plan.h) holds it; framework/runtime/loss.h computes it.
#pragma once

#include <cstdint>

#include "config/config.h"

namespace sift {

struct LossOptions {
  bool multi_label = false;
  Loss loss = Loss::softmax;  // train.loss
  int64_t negatives = 5;      // train.neg: labels drawn per example by train.loss ns
  double label_smoothing = 0.0;
  bool sum = false;  // sum over the batch's examples instead of the mean
};

// The loss options of a config (data.multi_label, train.loss, train.neg,
// train.label_smoothing, train.loss_reduction). Class weights (train.class_weights) need
// the task's label counts: the trainer makes them once the task is known.
LossOptions resolve_loss(const SiftConfig& config);

// Whether the run's scores become probabilities by a sigmoid per label (multi-label data,
// train.loss ns and ova) rather than a softmax over labels.
bool sigmoid_scores(bool multi_label, Loss loss);

}  // namespace sift
