// Helpers shared by the bag models' tests (fasttext, mlp): a shape and a hand-made batch.
#pragma once

#include <torch/torch.h>

#include "datasets/batch.h"
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

// Four examples over 20 ids with these labels: a repeated id, an empty text, one id,
// and a longer bag.
inline RawBatch four_bags(const std::vector<int64_t>& labels) {
  RawBatch b;
  b.add({1, 2, 2, 3}, labels.at(0));
  b.add({}, labels.at(1));
  b.add({4}, labels.at(2));
  b.add({5, 6, 7, 8, 19}, labels.at(3));
  return b;
}

// A batch's ids and offsets as the model's input.
inline ModelInput input_of(const RawBatch& b) {
  ModelInput in;
  in.ids = torch::tensor(b.ids, torch::kInt64);
  in.offsets = torch::tensor(b.offsets, torch::kInt64);
  return in;
}

}  // namespace sift::test_util
