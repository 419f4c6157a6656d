// train.prune: gradual magnitude pruning (Zhu & Gupta 2017, "To prune, or not to prune").
// Every train.prune.every optimizer steps from start_step to end_step the masks are
// recomputed at the cubic schedule's sparsity: each group's units (models/prune_units.h)
// with the smallest L2 norms, or each named parameter's smallest weights, are masked.
// Gradients are masked before every optimizer step and the masks applied after it, so
// pruned weights stay exactly zero. The masks are saved in last.ckpt and best.ckpt.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "framework/runtime/checkpoint.h"
#include "models/model.h"

namespace sift {

// The checkpoint section that holds the masks.
inline constexpr const char* kPruneMasksSection = "prune_masks";

// The sparsity Zhu & Gupta's schedule reaches at optimizer step `step`:
// s_f (1 - (1 - (t - t0) / (end - t0))^3), 0 before start_step, s_f from end_step on.
double scheduled_sparsity(const PruneConfig& config, int64_t step);

class Pruner {
 public:
  // The model's units for each structure and the parameters matching train.prune.params;
  // sift::Error naming train.prune.params for a pattern that matches no parameter.
  // `optimizer`: whether pruned rows of sparse gradients stay zero without re-masking.
  Pruner(const PruneConfig& prune, const OptimizerConfig& optimizer, const ModelConfig& model,
         ClassifierImpl& classifier);

  // Before the optimizer step: zero the gradients of pruned weights.
  void mask_gradients();
  // After it: zero the pruned weights again (the optimizer's momentum may move them).
  void apply();
  // After step `step` was counted: recompute the masks when a schedule point is due.
  void update(int64_t step);
  // Whether the final sparsity is in place at `step` (best.ckpt is chosen from then on).
  bool at_final_sparsity(int64_t step) const { return step >= config_.end_step; }

  // The masks by name, for a checkpoint section; load() reads them back (from bytes in
  // tensors_bytes' layout; `path` names the file in errors).
  NamedTensors masks() const;
  void load(const std::string& bytes, const std::string& path);

  // What was pruned: units per group and the zeros of each pruned parameter.
  nlohmann::json report() const;
  // The report in a few lines for report.txt: units pruned per structure, and that
  // zeroed weights (unstructured) make a file compress, not dense products faster.
  std::string report_text() const;

 private:
  struct Structured {
    UnitGroup group;
    torch::Tensor keep;  // [units], 1 or 0
  };
  struct Unstructured {
    std::string param;
    torch::Tensor keep;  // the parameter's shape, 1 or 0
  };
  TensorMap gradients() const;

  PruneConfig config_;
  TensorMap params_;
  std::vector<Structured> structured_;
  std::vector<Unstructured> unstructured_;
  // Plain SGD moves only weights with a gradient: masked sparse gradients leave pruned
  // rows at zero, so apply() skips the 80 MB fastText tables between updates.
  bool sparse_rows_stay_ = false;
  torch::nn::Module masks_;  // the masks as buffers, for load()
};

}  // namespace sift
