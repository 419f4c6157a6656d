// Gradient checkpointing (train.gradient_checkpointing): a block's forward runs without keeping
// its activations, and backward runs it again to get them. LibTorch's C++ API has no
// torch.utils.checkpoint (pytorch/pytorch#52744), so this is a custom autograd function.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

#include "config/enums.h"
#include "models/base/recompute_policy.h"

namespace sift {

// run.shard: parameters (ZeRO stage 3; framework/train/layer_shards.h): blocks, or an
// embedding table, whose parameters each rank keeps only a slice of. Each call is
// collective: every rank makes the same calls in the same order.
class BlockShards {
 public:
  virtual ~BlockShards() = default;
  // Makes block `index`'s parameters whole (an all-gather of the slices), or nothing when
  // they are whole already.
  virtual void gather(int64_t index) = 0;
  // Frees them again (nothing while the model is held whole, between training steps).
  virtual void release(int64_t index) = 0;
  // The gradients of block `index`'s trainable parameters (in module order; undefined:
  // zero) from this rank's batch: summed over the ranks, each keeps its slice.
  virtual void reduce_gradients(int64_t index, const std::vector<torch::Tensor>& grads) = 0;
  // A table kept by rows (ClassifierImpl::row_table): gives `table` (the parameter) the
  // rows that `ids` name on any rank, gathered from the ranks that keep them, and returns
  // `ids` renumbered into them. Their gradient is reduced after the backward (the
  // trainer's call); without shards of `table` (or while it is whole) returns `ids`.
  virtual torch::Tensor gather_rows(const torch::Tensor& table, const torch::Tensor& ids) = 0;
};

// A block maps its inputs to one output. It may hold other tensors (masks, lengths),
// which get no gradient, and must read its parameters through its module, so that the
// re-run in backward builds a graph to them.
using Block = std::function<torch::Tensor(const std::vector<torch::Tensor>& inputs)>;

// block(inputs) through the recomputing autograd function: only `inputs` are kept for
// backward. Backward restores the random-number state of the first run (dropout draws the
// same masks; the state is put back afterwards) and its autocast state, re-runs the block
// with gradients on and returns the gradients of `inputs` and `parameters`.
// With `shards`, block `index`'s parameters are gathered around both runs, and their
// gradients go to shards->reduce_gradients instead of the parameters' own.
torch::Tensor recompute(const Block& block, const std::vector<torch::Tensor>& inputs,
                        const std::vector<torch::Tensor>& parameters, BlockShards* shards = nullptr,
                        int64_t index = 0);

// Runs block `index` through recompute() when `policy` selects it (or shards it) and a
// graph is being built (training, grad mode on), else directly (gathered around the run
// when sharded).
torch::Tensor run_block(const RecomputePolicy& policy, int64_t index, bool training,
                        const std::vector<torch::Tensor>& parameters, const Block& block,
                        const std::vector<torch::Tensor>& inputs);

}  // namespace sift
