// A model's training step without autograd: forward, gradient and plain SGD update in
// loops over the weight tensors' own memory. Models that have one (the fastText bag)
// name the view of their weights it steps (bag_sgd.h's BagTables) in their registry entry;
// framework/train/fast_path decides when to use it. An instance holds its own scratch space and raw
// pointers into the model's weights: Hogwild threads each make one over the same model and update
// it without locks.
#pragma once

#include "datasets/batch.h"

namespace sift {

class FusedSgd {
 public:
  virtual ~FusedSgd() = default;
  // The summed loss (train.loss) of the batch's examples, at the current weights; keeps the
  // gradient of (loss of each example x `scale`) for apply(). `scale` is 1 for a summed
  // loss, 1 / batch size for the mean: the gradient autograd would compute.
  virtual double gradient(const RawBatch& batch, double scale) = 0;
  // weights -= lr x the gradient gradient() kept (for the same batch).
  virtual void apply(const RawBatch& batch, double lr) = 0;
};

}  // namespace sift
