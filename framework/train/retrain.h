// `sift export --retrain` (fastText's `quantize -retrain`): after --cutoff has chosen
// the embedding rows to keep, the model trains again for the run's epochs on its
// training data, read through the run's own data path, with the ids of the other rows
// left out of their bags as the export will leave them out. Then the export quantizes
// what was retrained.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "framework/runtime/model_bundle.h"

namespace sift {

struct RetrainOptions {
  std::string table;   // the lookup table's parameter ("embedding.weight")
  torch::Tensor kept;  // bool [rows]: the rows --cutoff keeps
  bool rows = true;    // train the kept rows as well (as fastText), or only the rest
  bool quiet = false;
};

struct RetrainSummary {
  int64_t epochs = 0;
  int64_t steps = 0;
  int64_t examples = 0;
  double last_epoch_loss = 0.0;  // mean loss per example
};

// Trains bundle.model in place (on the CPU) with the run's optimizer, learning rate and
// schedule, loss and batch size, from a fresh optimizer state.
RetrainSummary retrain_kept_rows(ModelBundle& bundle, const RetrainOptions& options);

}  // namespace sift
