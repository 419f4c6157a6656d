// Where a closed batch of a padded model is cut into the runs its forwards take. A run pads
// every text to its longest, and each forward also costs a fixed amount whatever it holds:
// the Transformer export of configs/sst2_transformer.yaml on one thread took about 280 us
// plus 9.5 us per padded token (batches of 1 to 32 texts of 8 to 48 tokens,
// bench/python/forward_grid.py), so a forward's own cost is about 30 tokens'.
// At concurrency 32 the queue rarely holds more than max_batch texts, so length buckets
// have nothing to choose from: a batch of every queued text was 42% padding. Sorted by
// length and cut where the padding saved passes a run's cost, it is cut into runs of
// similar length (issue #39).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sift::serve {

// `lengths` ascending (each text's tokens). The runs that minimise their padded tokens plus
// `run_cost` tokens each, none past `max_tokens` padded tokens unless it holds one text:
// each run's end (exclusive), ascending, the last == lengths.size().
std::vector<size_t> cut_runs(const std::vector<int64_t>& lengths, int64_t run_cost,
                             int64_t max_tokens);

}  // namespace sift::serve
