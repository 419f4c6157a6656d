// The fastText bag's fused SGD step (fused_sgd.h) over its tables as plain memory, the loop
// fastText itself runs: mean of embedding rows, output layer, the loss's gradient, update
// of the output rows and of the embedding rows the batch touched. No LibTorch: the fastText
// learner (framework/train/base/fasttext_learner.h) steps with it in both programs, over
// arrays of its own (sift-lite) or the LibTorch model's tensors (fasttext_tables.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "config/enums.h"
#include "models/base/fused_sgd.h"
#include "models/base/label_tree.h"
#include "models/base/negative_sampler.h"

namespace sift {

// The fastText model's weights and loss, for the step. The tables are updated in place.
struct BagTables {
  float* embedding = nullptr;  // [rows, dim]
  float* weight = nullptr;     // [classes, dim], row-major; hs: one row per tree node
  float* bias = nullptr;       // [classes]
  int64_t rows = 0, classes = 0, dim = 0;
  Loss loss = Loss::softmax;
  int64_t negatives = 0;            // ns: draws per example
  const LabelTree* tree = nullptr;  // hs
  // hs, ns: the label counts (one a label) the tree and the draws come from, a buffer of
  // the model's that checkpoints keep; null: none.
  const int64_t* label_counts = nullptr;
  const NegativeSampler* sampler = nullptr;  // ns
  std::function<uint64_t()> seed;            // ns: each batch's draw seed
};

std::unique_ptr<FusedSgd> bag_sgd(const BagTables& tables);

}  // namespace sift
