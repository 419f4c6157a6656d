#include "framework/train/divergence.h"

namespace sift {

std::string nonfinite_advice() {
  return "try a lower train.optimizer.lr, train.loss_reduction: mean, or train.clip_norm "
         "(e.g. 1.0)";
}

}  // namespace sift
