// Helpers shared by the bag models' tests (fasttext, mlp): a shape and a hand-made batch.
#pragma once

#include <torch/torch.h>

#include "models/model.h"

namespace sift::test_util {

inline ModelShape bag_shape(int64_t ids, int64_t classes, bool sparse = false) {
  ModelShape s;
  s.num_ids = ids;
  s.num_classes = classes;
  s.sparse_gradients = sparse;
  return s;
}

// Three bags: {1, 2, 3}, {4}, {5, 6}.
inline ModelInput bags() {
  ModelInput in;
  in.ids = torch::tensor({1, 2, 3, 4, 5, 6}, torch::kInt64);
  in.offsets = torch::tensor({0, 3, 4}, torch::kInt64);
  return in;
}

}  // namespace sift::test_util
