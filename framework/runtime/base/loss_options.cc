#include "framework/runtime/base/loss_options.h"

namespace sift {

LossOptions resolve_loss(const SiftConfig& config) {
  LossOptions o;
  o.multi_label = config.data.multi_label;
  o.loss = config.train.loss;
  o.negatives = config.train.neg;
  o.label_smoothing = config.train.label_smoothing;
  o.sum = config.train.loss_reduction == LossReduction::sum;
  return o;
}

bool sigmoid_scores(bool multi_label, Loss loss) {
  return multi_label || loss == Loss::ns || loss == Loss::ova;
}

}  // namespace sift
