// Collate: a batch of encoded examples (torch-free RawBatch) as model input tensors.
#pragma once

#include <torch/torch.h>

#include "datasets/batch.h"
#include "models/model.h"

namespace sift {

// Moves a batch's vectors into tensors on `device`, as the model's input kind needs: bags
// keep the flat ids and offsets; sequences become a zero-padded [batch, longest] matrix
// with lengths on the CPU.
ModelInput to_input(const RawBatch& batch, InputKind kind, torch::Device device);

}  // namespace sift
