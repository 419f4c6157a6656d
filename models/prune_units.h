// What structured pruning (train.prune) removes of a model: its units (a TextCNN filter,
// a Transformer attention head or feed-forward unit, an RNN hidden unit, a fastText
// embedding row) as the parameter slices each owns, ranked against the other units of
// their group by the L2 norm of those slices. Masking zeroes every slice of a pruned unit, so
// removing the unit from the matrices (export) leaves the logits as they were.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"

namespace sift {

// The slice of a parameter one unit owns: along `dim`, unit u holds the indices
// [offset + u * size, offset + (u + 1) * size).
struct UnitSlice {
  std::string param;
  int64_t dim = 0;
  int64_t offset = 0;
  int64_t size = 1;
};

// Units ranked against each other (one layer's heads, one filter width's filters).
struct UnitGroup {
  std::string name;  // "layers.0.heads"
  int64_t units = 0;
  std::vector<UnitSlice> slices;
  // Rows of a table looked up by id (fastText): an export keeps the surviving rows, a zero
  // row for the others and a map from ids to rows (kept_rank, kept_before: kept_rows.h).
  bool lookup = false;
};

using TensorMap = std::map<std::string, torch::Tensor>;
// A model's groups for one structure, from its options and its tensors' shapes.
using PruneUnits =
    std::function<std::vector<UnitGroup>(const ModelConfig&, PruneStructure, const TensorMap&)>;

// The group's slices of `t` viewed with the units split out: dim `slice.dim` becomes
// [units, size].
torch::Tensor unit_view(const torch::Tensor& t, const UnitSlice& slice, int64_t units);
// [units]: the L2 norm of each unit's slices together.
torch::Tensor unit_norms(const TensorMap& tensors, const UnitGroup& group);
// Multiplies each unit's slices by keep[u] (0 or 1), in place; tensors missing from the
// map or sparse are left alone.
void mask_units(const TensorMap& tensors, const UnitGroup& group, const torch::Tensor& keep);
// The tensors with every unit whose slices are all zero taken out (a group keeps all of
// its units when all are zero); lookup groups as UnitGroup::lookup says.
TensorMap remove_pruned_units(TensorMap tensors, const std::vector<UnitGroup>& groups);

// The units of each model (registered in models/registry.cc).
std::vector<UnitGroup> textcnn_units(const ModelConfig& config, PruneStructure structure,
                                     const TensorMap& tensors);
std::vector<UnitGroup> transformer_units(const ModelConfig& config, PruneStructure structure,
                                         const TensorMap& tensors);
std::vector<UnitGroup> rnn_units(const ModelConfig& config, PruneStructure structure,
                                 const TensorMap& tensors);
std::vector<UnitGroup> fasttext_units(const ModelConfig& config, PruneStructure structure,
                                      const TensorMap& tensors);

}  // namespace sift
