// A batch as plain vectors, free of any tensor type: the trainer turns it into tensors
// on the device it uses.
#pragma once

#include <cstdint>
#include <vector>

namespace sift {

struct RawBatch {
  std::vector<int64_t> ids;      // all examples' ids, concatenated
  std::vector<int64_t> offsets;  // where each example's ids start in `ids`
  std::vector<int64_t> labels;   // one label id per example (multi-label: the first)
  // Multi-label batches only (empty otherwise, so single-label batches cost nothing more):
  // every example's label ids concatenated, and where each example's list starts.
  std::vector<int64_t> label_lists;
  std::vector<int64_t> label_starts;
  int64_t size() const { return static_cast<int64_t>(labels.size()); }
  void clear() {
    ids.clear();
    offsets.clear();
    labels.clear();
    label_lists.clear();
    label_starts.clear();
  }
};

}  // namespace sift
