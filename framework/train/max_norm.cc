#include "framework/train/max_norm.h"

#include "core/error.h"

namespace sift {

void apply_max_norm(torch::nn::Module& model, double max_norm) {
  auto parameters = model.named_parameters();  // find() points into this dictionary
  torch::Tensor* weight = parameters.find("output.weight");
  if (weight == nullptr) {
    throw Error("train.max_norm: the model has no output layer weight ('output.weight') to bound.");
  }
  torch::NoGradGuard no_grad;
  weight->renorm_(2, 0, max_norm);  // rows: one per label
}

}  // namespace sift
