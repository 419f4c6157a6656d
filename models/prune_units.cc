#include "models/prune_units.h"

#include <fmt/format.h>

#include "core/error.h"
#include "models/kept_rows.h"
#include "models/rnn.h"

namespace sift {

torch::Tensor unit_view(const torch::Tensor& t, const UnitSlice& slice, int64_t units) {
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d == slice.dim) {
      shape.push_back(units);
      shape.push_back(slice.size);
    } else {
      shape.push_back(t.size(d));
    }
  }
  // Splitting one dimension is a view whatever the strides (out_proj's columns too).
  return t.narrow(slice.dim, slice.offset, units * slice.size).view(shape);
}

torch::Tensor unit_norms(const TensorMap& tensors, const UnitGroup& group) {
  torch::NoGradGuard no_grad;
  auto squares = torch::zeros({group.units}, torch::kFloat64);
  for (const auto& s : group.slices) {
    auto it = tensors.find(s.param);
    if (it == tensors.end()) throw Error(fmt::format("pruning: the model has no '{}'", s.param));
    auto v = unit_view(it->second.detach().to(torch::kCPU), s, group.units).movedim(s.dim, 0);
    squares += v.reshape({group.units, -1}).to(torch::kFloat64).pow(2).sum(1);
  }
  return squares.sqrt();
}

void mask_units(const TensorMap& tensors, const UnitGroup& group, const torch::Tensor& keep) {
  torch::NoGradGuard no_grad;
  for (const auto& s : group.slices) {
    auto it = tensors.find(s.param);
    if (it == tensors.end() || !it->second.defined() || it->second.is_sparse()) continue;
    const torch::Tensor& t = it->second;
    std::vector<int64_t> shape(static_cast<size_t>(t.dim() + 1), 1);
    shape[static_cast<size_t>(s.dim)] = group.units;
    unit_view(t, s, group.units).mul_(keep.to(t.device(), t.scalar_type()).view(shape));
  }
}

namespace {

// Per block of kKeptBlock ids, the kept rows before the block (int64), and per id its rank
// among the block's kept rows (uint8; kPrunedRank when not kept). One byte per id: 2.5% of
// a dim-10 fp32 table. A binary search over the kept ids (4 bytes each) instead cost
// 590 us for 6,400 ids against 88 us for the whole dense bag lookup (measured, one thread).
void write_rank_map(TensorMap& tensors, const std::string& prefix, const torch::Tensor& alive) {
  const int64_t n = alive.size(0), blocks = (n + kKeptBlock - 1) / kKeptBlock;
  auto rank = torch::full({n}, kPrunedRank, torch::kUInt8);
  auto before = torch::zeros({blocks}, torch::kInt64);
  const bool* a = alive.data_ptr<bool>();
  auto* r = rank.data_ptr<uint8_t>();
  auto* b = before.data_ptr<int64_t>();
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (i % kKeptBlock == 0) b[i / kKeptBlock] = kept;
    if (a[i]) r[i] = static_cast<uint8_t>(kept++ - b[i / kKeptBlock]);
  }
  tensors[prefix + ".kept_rank"] = rank;
  tensors[prefix + ".kept_before"] = before;
}

}  // namespace

void keep_lookup_rows(TensorMap& tensors, const std::string& table, const torch::Tensor& alive,
                      KeptMap map, Unkept unkept) {
  const torch::Tensor kept_alive = alive.to(torch::kCPU, torch::kBool).contiguous();
  torch::Tensor& t = tensors.at(table);
  if (kept_alive.size(0) != t.size(0)) {
    throw Error(fmt::format("export: a mask of {} rows to keep for '{}', which has {}",
                            kept_alive.size(0), table, t.size(0)));
  }
  const std::string prefix = table.substr(0, table.rfind('.'));
  const torch::Tensor ids = kept_alive.nonzero().view({-1});
  if (map == KeptMap::rank_per_id) {
    write_rank_map(tensors, prefix, kept_alive);
  } else {
    tensors[prefix + ".kept_ids"] = ids.to(torch::kInt32).contiguous();
  }
  t = t.index_select(0, ids);
  if (unkept == Unkept::zero_row) {
    t = torch::cat({t, torch::zeros({1, t.size(1)}, t.options())});
  } else {
    tensors[prefix + kUnkeptDroppedSuffix] = torch::ones({}, torch::kBool);
  }
}

TensorMap remove_pruned_units(TensorMap tensors, const std::vector<UnitGroup>& groups) {
  // Per parameter and dimension, which indices stay: groups may share a parameter (the
  // TextCNN output layer's columns), so all are marked first and cut once.
  std::map<std::pair<std::string, int64_t>, std::vector<bool>> keep;
  for (const auto& g : groups) {
    const auto alive = unit_norms(tensors, g) > 0;
    if (!alive.any().item<bool>()) continue;
    if (g.lookup) {
      keep_lookup_rows(tensors, g.slices.at(0).param, alive, KeptMap::rank_per_id,
                       Unkept::zero_row);
      continue;
    }
    const auto* a = alive.data_ptr<bool>();
    for (const auto& s : g.slices) {
      auto& k = keep[{s.param, s.dim}];
      if (k.empty()) k.assign(static_cast<size_t>(tensors.at(s.param).size(s.dim)), true);
      for (int64_t u = 0; u < g.units; ++u) {
        if (a[u]) continue;
        for (int64_t j = 0; j < s.size; ++j)
          k[static_cast<size_t>(s.offset + u * s.size + j)] = false;
      }
    }
  }
  for (const auto& [key, k] : keep) {
    std::vector<int64_t> index;
    for (size_t i = 0; i < k.size(); ++i) {
      if (k[i]) index.push_back(static_cast<int64_t>(i));
    }
    torch::Tensor& t = tensors.at(key.first);
    t = t.index_select(key.second, torch::tensor(index, torch::kInt64)).contiguous();
  }
  return tensors;
}

std::vector<UnitGroup> textcnn_units(const ModelConfig& config, PruneStructure structure,
                                     const TensorMap&) {
  std::vector<UnitGroup> groups;
  if (structure != PruneStructure::filters) return groups;
  for (size_t i = 0; i < config.widths.size(); ++i) {
    const std::string conv = fmt::format("convs.{}.", i);
    const auto column = static_cast<int64_t>(i) * config.filters;
    groups.push_back(
        {conv + "filters",
         config.filters,
         {{conv + "weight", 0, 0, 1}, {conv + "bias", 0, 0, 1}, {"output.weight", 1, column, 1}}});
  }
  return groups;
}

std::vector<UnitGroup> transformer_units(const ModelConfig& config, PruneStructure structure,
                                         const TensorMap&) {
  std::vector<UnitGroup> groups;
  const int64_t dim = config.dim, head_dim = config.dim / config.heads;
  for (int64_t l = 0; l < config.layers; ++l) {
    const std::string p = fmt::format("layers.{}.", l);
    if (structure == PruneStructure::heads) {
      // A head's query, key and value rows of in_proj (laid out q, k, v) and its columns
      // of out_proj: with all of them zero its output is zero.
      UnitGroup g{p + "heads", config.heads, {}};
      for (const int64_t part : {0, 1, 2}) {
        g.slices.push_back({p + "attention.in_proj.weight", 0, part * dim, head_dim});
        g.slices.push_back({p + "attention.in_proj.bias", 0, part * dim, head_dim});
      }
      g.slices.push_back({p + "attention.out_proj.weight", 1, 0, head_dim});
      groups.push_back(std::move(g));
    } else if (structure == PruneStructure::ffn) {
      // GELU(0) = 0: a unit without input weights and bias adds nothing.
      groups.push_back({p + "ffn",
                        config.ff_dim,
                        {{p + "ff_in.weight", 0, 0, 1},
                         {p + "ff_in.bias", 0, 0, 1},
                         {p + "ff_out.weight", 1, 0, 1}}});
    }
  }
  return groups;
}

std::vector<UnitGroup> rnn_units(const ModelConfig& config, PruneStructure structure,
                                 const TensorMap&) {
  std::vector<UnitGroup> groups;
  if (structure != PruneStructure::hidden) return groups;
  const int64_t hidden = config.hidden, gates = config.cell == "gru" ? 3 : 4;
  const int directions = config.bidirectional ? 2 : 1;
  for (int64_t l = 0; l < config.layers; ++l) {
    for (int d = 0; d < directions; ++d) {
      // Its row of each gate in both products and both biases: with all of them zero the
      // gates sit at sigmoid(0) and the candidate at tanh(0) = 0, so a state that starts at
      // zero stays zero (LSTM: c = c / 2, h = tanh(c) / 2; GRU: h = h / 2).
      const std::string s = rnn_suffix(l, d == 1);
      UnitGroup g{"rnn.hidden" + s, hidden, {}};
      for (int64_t gate = 0; gate < gates; ++gate) {
        for (const char* kind : {"weight_ih", "weight_hh", "bias_ih", "bias_hh"}) {
          g.slices.push_back({fmt::format("rnn.{}{}", kind, s), 0, gate * hidden, 1});
        }
      }
      // What reads its state: its own recurrence, then the next layer's two directions or
      // the pooling's attention and the output layer (features: forward units, then backward).
      g.slices.push_back({"rnn.weight_hh" + s, 1, 0, 1});
      const int64_t feature = d * hidden;
      if (l + 1 < config.layers) {
        for (int next = 0; next < directions; ++next) {
          g.slices.push_back({"rnn.weight_ih" + rnn_suffix(l + 1, next == 1), 1, feature, 1});
        }
      } else {
        if (config.pooling == "attention") g.slices.push_back({"attention.weight", 1, feature, 1});
        g.slices.push_back({"output.weight", 1, feature, 1});
      }
      groups.push_back(std::move(g));
    }
  }
  return groups;
}

std::vector<UnitGroup> fasttext_units(const ModelConfig&, PruneStructure structure,
                                      const TensorMap& tensors) {
  if (structure != PruneStructure::rows) return {};
  // A zero row adds nothing to a bag's sum and still counts in its mean: the export's
  // zero row for pruned ids keeps that.
  UnitGroup g{
      "embedding.rows", tensors.at("embedding.weight").size(0), {{"embedding.weight", 0, 0, 1}}};
  g.lookup = true;
  return {g};
}

}  // namespace sift
