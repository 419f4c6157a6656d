// What each rank of a run holds and how long it waited on the others, for report.json
// (train.ranks) and the closing lines: bytes of weights (between steps, and at their peak
// inside one: run.shard: parameters gathers one layer at a time), of gradients (held at the end,
// and at their peak, the backward's whole gradient), of optimizer state, its slice under
// run.shard, peak RSS, and the seconds of the gradients' all-reduce and the parameters'
// all-gather.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "framework/train/run.h"

namespace sift {

// Collective: every rank's figures, in rank order, on every rank.
nlohmann::json rank_figures(Run& run);

// One line per rank.
std::string ranks_text(const nlohmann::json& ranks);

}  // namespace sift
