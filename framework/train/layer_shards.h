// ZeRO stage 3 (run.shard: parameters): each rank keeps only its slice of each layer's
// parameters (ShardedOptimizer's pieces kept apart). A layer's parameters are views into
// one flat buffer of the layer whose memory is freed between its uses: gathered from
// every rank's slice before the layer's forward, freed after it, gathered again for the
// re-run in backward (every layer is recomputed), and its gradient, averaged over the
// ranks, goes to each rank's slice (an all-reduce and a local slice: Gloo 1.13 has no
// reduce-scatter). The model calls these through BlockShards (models/recompute.h).
//
// Between training steps the layers are freed. Whatever reads the weights outside a step
// (evaluation, saving, the best weights) first makes the model whole (hold_whole,
// collective); the next step frees it again (from_whole keeps this rank's slice of
// what the whole weights hold, so loading weights into them is kept too).
#pragma once

#include <torch/torch.h>

#include <vector>

#include "framework/train/distributed.h"
#include "framework/train/sharding.h"
#include "models/recompute.h"

namespace sift {

class LayerShards : public BlockShards {
 public:
  // `params`, `units`: as ShardedOptimizer got them (its stage-3 constructor; `shards`
  // must have been made from the same); `all`: every parameter of the model (for the
  // resident bytes). Starts whole.
  LayerShards(Distributed& dist, ShardedOptimizer& shards, const std::vector<torch::Tensor>& params,
              const std::vector<int64_t>& units, std::vector<torch::Tensor> all);

  void gather(int64_t index) override;
  void release(int64_t index) override;
  void reduce_gradients(int64_t index, const std::vector<torch::Tensor>& grads) override;

  // Collective: every layer whole, until the next from_whole.
  void hold_whole();
  // Each layer's slice kept from the whole weights, and their memory freed (local).
  void from_whole();
  bool whole() const { return whole_; }
  // Collective: what a rank without a batch does so that the others' per-layer
  // collectives find it: the forward's and the backward's gathers and a zero gradient.
  void idle_pass();

  // The layers' parameters (their gradients are reduced in backward, not at the step).
  const std::vector<torch::Tensor>& sharded_parameters() const { return sharded_; }

  // Bytes of weights this rank holds, measured from the parameters' storages (a freed
  // layer's hold none) plus the slices kept apart: after each step (between steps), and
  // the most while a layer was gathered inside one. (Held whole, for validation or a
  // save, a rank holds the whole weights and its slices: not counted here.)
  void measure_between_steps();
  int64_t between_steps_bytes() const { return between_steps_; }
  int64_t peak_bytes() const { return peak_; }
  // The largest layer's bytes (one layer's whole gradient is held while it is reduced).
  int64_t largest_layer_bytes() const;

 private:
  struct Layer {
    int64_t unit = -1;                  // ShardedOptimizer's unit
    std::vector<torch::Tensor> params;  // views into `flat`
    torch::Tensor flat;                 // its storage freed between uses
  };
  Layer* layer(int64_t index);
  void allocate_memory(Layer& l);
  void free_memory(Layer& l);
  int64_t resident_bytes() const;

  Distributed& dist_;
  ShardedOptimizer& shards_;
  std::vector<Layer> layers_;  // by block index; unit -1: no trainable parameter
  std::vector<torch::Tensor> sharded_;
  std::vector<torch::Tensor> all_;
  bool whole_ = true;
  int64_t between_steps_ = 0;
  int64_t peak_ = 0;
};

}  // namespace sift
