// The id map of a lookup table reduced to some of its rows (keep_lookup_rows below, in
// prune_units.cc): train.prune's structured pruning, and `sift export --cutoff`. Read by
// the fastText export's script. Two encodings, next to the table "<prefix>.weight":
//  - "<prefix>.kept_rank" + "<prefix>.kept_before": ids in blocks of kKeptBlock, per
//    block the kept rows before it (int64), per id its rank among its block's kept rows
//    (uint8; kPrunedRank when not kept). One byte per id, and a lookup as fast as the
//    dense table's.
//  - "<prefix>.kept_ids": the kept ids, sorted (int32), found by binary search: 4 bytes
//    per kept row, so smaller when few rows stay (a 2M-row table cut to 100k rows: 0.4 MB
//    against 2.1 MB), slower to look up.
// With Unkept::nothing the marker "<prefix>.unkept_dropped" (never written to a file)
// tells the script that ids outside the kept rows leave their bag.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>

namespace sift {

inline constexpr int64_t kKeptBlock = 128;
inline constexpr uint8_t kPrunedRank = 255;

enum class KeptMap { rank_per_id, sorted_ids };

// What an id whose row is gone reads: a zero row after the kept ones, which still counts
// in its bag's mean (train.prune: as the masked row did); or nothing, the id leaves its
// bag (--cutoff, as fastText's pruned dictionary drops the word).
enum class Unkept { zero_row, nothing };

inline constexpr const char* kUnkeptDroppedSuffix = ".unkept_dropped";

// Reduces the lookup table `table` (rows looked up by id) of `tensors` to its rows where
// `alive` (bool [rows]) and adds the map from ids to them, encoded as `map`; ids of the
// other rows read what `unkept` says (models/prune_units.cc).
void keep_lookup_rows(std::map<std::string, torch::Tensor>& tensors, const std::string& table,
                      const torch::Tensor& alive, KeptMap map, Unkept unkept);

}  // namespace sift
