// ZeRO's stages 1 to 3 (run.shard) over a process group. The trainable parameters, in
// module order, form one flat space that is cut into world_size contiguous slices of
// nearly equal size; a cut falls inside a tensor, so one large table (fastText's buckets)
// is split evenly too. Each rank keeps the optimizer state of its own slice only: an
// optimizer of the configured type over one view per piece of the slice (a piece: the
// part of one parameter inside the slice). A step gives each piece its part of the
// averaged gradient, steps them (the parameters' own memory changes), and all-gathers
// the parameters from their owners. Every optimizer here is elementwise, so the weights
// are DDP's (docs/distributed.md says when bit for bit).
// Stage 3 (parameters): each layer's parameters are cut into world_size slices of their
// own, and this rank's pieces of a layer are kept apart from the parameters, whose memory
// layer_shards.h frees between the layer's uses; the rest stays whole, as under
// `gradients`.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "config/config.h"
#include "framework/train/distributed.h"

namespace sift {

// The slices of a flat space of `numels` (each parameter's element count, in order)
// over `ranks`: slice r is [cuts[r], cuts[r + 1]). A cut inside a parameter is a multiple
// of 64 elements from its start, so that a slice's elementwise kernels split a tensor
// where the whole tensor's vector loops do.
std::vector<int64_t> shard_cuts(const std::vector<int64_t>& numels, int64_t ranks);

class ShardedOptimizer {
 public:
  // `params`: the trainable parameters in the order create_optimizer takes them, equal
  // on every rank (broadcast first). A parameter that is not contiguous, or of another
  // dtype than the first, is an Error naming run.shard.
  // `units` (stage 3; empty otherwise): each parameter's layer, or -1 for one that stays
  // whole on every rank. A layer's parameters are consecutive.
  ShardedOptimizer(Distributed& dist, ShardStage stage, const OptimizerConfig& config,
                   std::vector<torch::Tensor> params, double bucket_mb,
                   std::vector<int64_t> units = {});
  ~ShardedOptimizer();

  void set_lr(double lr);
  // After the gradients are averaged (unscaled, clipped): steps this rank's slice and
  // all-gathers the parameters. Under `gradients` it then frees every gradient.
  void step();

  // Stage 3, for layer_shards.h. `flat`: layer `unit`'s parameters, flat, one after
  // another (unit_elements of them). gather_unit (collective) fills it from every rank's
  // slice; keep_unit copies this rank's slice of it into the pieces; add_unit_gradient
  // adds this rank's slice of the layer's averaged gradient to theirs.
  int64_t unit_elements(int64_t unit) const;
  void gather_unit(int64_t unit, const torch::Tensor& flat);
  void keep_unit(int64_t unit, const torch::Tensor& flat);
  void add_unit_gradient(int64_t unit, const torch::Tensor& gradient);
  // A table kept by rows (layer `unit`, rows.size(1) wide): its rows `ids` (sorted,
  // unique, int64 on the CPU) into `rows` [ids, dim], which holds zeros: gather_unit_rows
  // (collective) fills this rank's elements of them and sums `rows` over the ranks (x + 0
  // is exact); add_unit_rows adds this rank's elements of their averaged gradient
  // `gradient` [ids, dim] to its slice's gradient.
  void gather_unit_rows(int64_t unit, const torch::Tensor& ids, torch::Tensor& rows);
  void add_unit_rows(int64_t unit, const torch::Tensor& ids, const torch::Tensor& gradient);
  // The layers' pieces kept apart from the parameters (this rank's slices), and their bytes.
  std::vector<torch::Tensor> kept_apart() const;
  int64_t kept_apart_bytes() const;

  // A save of last.ckpt, in the ordinary layout (what an optimizer over the whole
  // parameters holds: the file does not depend on the world size), without any rank
  // holding the whole state. prepare_state (collective, before the save) says whether the
  // slices hold a state to save, alike on every rank; if so, rank 0's `full` (an
  // optimizer of the same type over the same parameters, holding no state) gets the whole
  // state as untouched zeros (untouched_zeros.h), state_tensors lists them, and the
  // archive's writer (optimizer_stream) calls fill_state for each in turn, which gathers it
  // from every rank's slice and gives the one before back. Rank 0 ends the save with
  // end_state_write; the other ranks take part with send_state, which returns then.
  bool prepare_state(torch::optim::Optimizer& full);
  const std::vector<torch::Tensor>& state_tensors() const;
  void fill_state(const torch::Tensor& tensor);
  void end_state_write();
  void send_state();
  // The most of the whole state's tensors rank 0 held at once in a save (mincore of
  // their pages, taken at each fill_state and at the end); 0 on the other ranks.
  int64_t save_peak_bytes() const;
  // `full` holds the whole state (read from a checkpoint): keeps this rank's slices of
  // it, then empties `full`.
  void scatter_state(torch::optim::Optimizer& full);

  // report.json's figures of this rank: its optimizer state's bytes, its slice's
  // elements, and the time of the parameters' all-gathers.
  int64_t state_bytes() const;
  int64_t slice_elements() const;
  double gather_seconds() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The bytes of the state an optimizer of `config`'s type holds now.
int64_t optimizer_state_bytes(const OptimizerConfig& config, torch::optim::Optimizer& optimizer);

}  // namespace sift
