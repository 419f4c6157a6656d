// The id map of a lookup table whose rows structured pruning removed (UnitGroup::lookup,
// written by remove_pruned_units, read by the fastText export's script): ids in blocks of
// kKeptBlock, per block the kept rows before it, per id its rank among its block's kept
// rows, kPrunedRank for a pruned one.
#pragma once

#include <cstdint>

namespace sift {

inline constexpr int64_t kKeptBlock = 128;
inline constexpr uint8_t kPrunedRank = 255;

}  // namespace sift
