#include "framework/train/base/row_journal.h"

#include <algorithm>

namespace sift {

void RowJournal::start() {
  if (kept_bits_.empty()) {
    kept_bits_.assign(static_cast<size_t>((rows_ + 63) / 64), 0);
  } else {
    for (const Block& b : blocks_) {
      for (const int64_t id : b.ids) kept_bits_[static_cast<uint64_t>(id) >> 6] = 0;
    }
  }
  blocks_.clear();
  kept_ = 0;
  active_ = true;
}

void RowJournal::add(const float* table, int64_t id) {
  if (blocks_.empty() || static_cast<int64_t>(blocks_.back().ids.size()) == block_rows_) {
    blocks_.emplace_back();
    blocks_.back().ids.reserve(static_cast<size_t>(block_rows_));
    blocks_.back().values.reserve(static_cast<size_t>(block_rows_ * width_));
  }
  Block& b = blocks_.back();
  b.ids.push_back(id);
  const float* row = table + id * width_;
  b.values.insert(b.values.end(), row, row + width_);
  ++kept_;
}

void RowJournal::swap(float* table) {
  for (Block& b : blocks_) {
    float* kept = b.values.data();
    for (const int64_t id : b.ids) {
      float* row = table + id * width_;
      std::swap_ranges(row, row + width_, kept);
      kept += width_;
    }
  }
}

void RowJournal::clear() {
  kept_bits_ = {};
  blocks_ = {};
  kept_ = 0;
  active_ = false;
}

}  // namespace sift
