// ZeRO stage 3 (run.shard: parameters): each rank keeps only its slice of each layer's
// parameters (ShardedOptimizer's pieces kept apart). A layer's parameters are views into
// one flat buffer of the layer whose memory is freed between its uses: gathered from
// every rank's slice before the layer's forward, freed after it, gathered again for the
// re-run in backward (every layer is recomputed), and its gradient, averaged over the
// ranks, goes to each rank's slice (an all-reduce and a local slice: Gloo 1.13 has no
// reduce-scatter). The model calls these through BlockShards (models/recompute.h).
//
// Between training steps the layers are freed. Evaluation runs the forward as training
// does, a layer gathered and freed at a time, every rank in step (a rank out of batches
// runs idle_forward); a save writes each layer as it is gathered (fill, gather_rest), and
// whether the weights are finite is each rank's slices' verdict summed. What else reads
// or sets the weights outside a step (the best weights' copy, loading them back) first
// makes the model whole (hold_whole, collective); the next step frees it again
// (from_whole keeps this rank's slice of what the whole weights hold, so loading weights
// into them is kept too).
//
// A table kept by rows (the fastText model's word and bucket table, the transformer's
// and bert's token tables: ClassifierImpl::row_table) is one such layer that no forward gathers
// whole: gather_rows gives the parameter the rows the ranks' batches read (their union,
// and row 0, the sequence models' padding row), [rows, dim], and the model's own forward
// runs on them with its ids renumbered; after the backward reduce_rows averages their
// gradient over the ranks and each rank adds the rows of its slice to its gradient. A
// save, a load and hold_whole treat it as any layer (gathered whole, one at a time).
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
  // The first `row_tables` units are tables kept by rows; the blocks (gather's `index`)
  // are the units after them.
  LayerShards(Distributed& dist, ShardedOptimizer& shards, const std::vector<torch::Tensor>& params,
              const std::vector<int64_t>& units, std::vector<torch::Tensor> all,
              int64_t row_tables = 0);

  void gather(int64_t index) override;
  void release(int64_t index) override;
  void reduce_gradients(int64_t index, const std::vector<torch::Tensor>& grads) override;
  torch::Tensor gather_rows(const torch::Tensor& table, const torch::Tensor& ids) override;
  // Collective, after each backward (a rank without a batch: idle_pass): the gathered rows'
  // gradients averaged over the ranks, each rank's rows added to its slice's gradient; the
  // rows are freed. Nothing without a table kept by rows.
  void reduce_rows();
  // The gathered rows freed (after an evaluation; local).
  void release_rows();

  // Collective: every layer whole, until the next from_whole.
  void hold_whole();
  // Each layer's slice kept from the whole weights, and their memory freed (local).
  void from_whole();
  // Collective: what a rank without a batch does so that the others' per-layer
  // collectives find it: the forward's gathers (evaluation), and in training the
  // backward's gathers and a zero gradient too (idle_pass).
  void idle_forward();
  void idle_pass();

  // The weights this rank holds: the parameters with memory (the rest, a gathered layer)
  // and the layers' slices; over all ranks they are every weight.
  std::vector<torch::Tensor> held() const;

  // A save from freed layers (collective; checkpoint.h's fill_freed): each layer gathered
  // once, in order. On the rank that writes, fill(param) frees the layer filled last and
  // gathers the one that holds `param` (and, gathering and freeing them, those before it
  // that no written tensor asked for); every rank ends the save with gather_rest, which
  // does the same for the layers left and frees the last.
  void fill(const torch::Tensor& param);
  void gather_rest();
  // Weights read into freed layers (each rank reads the checkpoint itself: no
  // collective): load(param) keeps this rank's slice of the layer loaded before and frees
  // it, and gives the layer that holds `param` memory to read into; load_rest ends the
  // last. A layer's tensors must come together.
  void load(const torch::Tensor& param);
  void load_rest();

  // Collective, after the gradients are averaged: their global L2 norm (the rest's, whole
  // and equal on every rank, once; the layers' slices summed over the ranks), as
  // clip_grad_norm_ measures it of the whole gradient. clip_gradients (train.clip_norm)
  // then scales them all by max_norm / (norm + 1e-6) where that is below 1, as
  // clip_grad_norm_ does, and returns the norm.
  double gradient_norm() const;
  double clip_gradients(double max_norm);
  // The gradients of this rank's layer slices, or of the rest (whole on every rank).
  std::vector<torch::Tensor> gradients(bool slices) const;

  // The layers' parameters (their gradients are reduced in backward, not at the step).
  const std::vector<torch::Tensor>& sharded_parameters() const { return sharded_; }

  // Bytes of weights this rank holds, measured from the parameters' storages (a freed
  // layer's hold none) plus the slices kept apart: after each step (between steps), and
  // the most at any gather (inside a step, a validation, a save) or while held whole
  // (the whole weights and the slices).
  void measure_between_steps();
  int64_t between_steps_bytes() const { return between_steps_; }
  int64_t peak_bytes() const { return peak_; }
  // The largest layer's bytes (one layer's whole gradient is held while it is reduced); a
  // table kept by rows: the most rows gathered at once.
  int64_t largest_layer_bytes() const;

 private:
  struct Layer {
    int64_t unit = -1;                  // ShardedOptimizer's unit
    std::vector<torch::Tensor> params;  // views into `flat`
    torch::Tensor flat;                 // its storage freed between uses
    // A table kept by rows: its view into `flat` (params[0]'s data but while rows are
    // gathered), the rows gathered now (sorted ids; undefined: none) and the most bytes
    // of rows gathered at once.
    bool by_rows = false;
    torch::Tensor view;
    torch::Tensor ids;
    int64_t rows_peak = 0;
    // The ids the gather was asked for (held, so that no other tensor takes its address)
    // and what it returned: a second read of the same batch reuses the rows.
    torch::Tensor asked, renumbered;
  };
  Layer* layer(int64_t index);
  // By layer (unit), where gather and release take a block's index.
  void gather_layer(int64_t index);
  void release_layer(int64_t index);
  int64_t layer_of(const torch::Tensor& param) const;
  void keep_loaded();  // the layer being read into: its slice kept, its memory freed
  void allocate_memory(Layer& l);
  void free_memory(Layer& l);
  int64_t resident_bytes() const;

  Distributed& dist_;
  ShardedOptimizer& shards_;
  std::vector<Layer> layers_;  // by unit; unit -1: no trainable parameter
  int64_t first_block_ = 0;    // the layer of block 0: the tables kept by rows come first
  std::vector<torch::Tensor> sharded_;
  std::vector<torch::Tensor> all_;
  bool whole_ = true;
  int64_t between_steps_ = 0;
  int64_t peak_ = 0;
  int64_t next_fill_ = 0;  // the save's next layer to gather (fill)
  int64_t filled_ = -1;    // the layer a save holds gathered, -1: none
  int64_t loading_ = -1;   // the layer being read into, -1: none
  std::vector<bool> loaded_;
};

}  // namespace sift
