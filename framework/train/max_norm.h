// The max-norm constraint of Kim (2014): after each optimizer step, every row of the
// output layer's weight (one per label) whose L2 norm exceeds a bound is scaled back to it.
#pragma once

#include <torch/torch.h>

namespace sift {

// Applies the bound to the parameter "output.weight", which every model of the zoo has;
// sift::Error naming train.max_norm when the model has none.
void apply_max_norm(torch::nn::Module& model, double max_norm);

}  // namespace sift
