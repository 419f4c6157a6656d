#include "framework/train/base/row_journal.h"

#include <algorithm>

namespace sift {

void RowJournal::start() {
  if (kept_bits_.empty()) {
    kept_bits_.assign(static_cast<size_t>((rows_ + 63) / 64), 0);
  } else {
    for (const int64_t id : kept_) kept_bits_[static_cast<uint64_t>(id) >> 6] = 0;
  }
  kept_.clear();
  values_.clear();
  active_ = true;
}

void RowJournal::add(const float* table, int64_t id) {
  kept_.push_back(id);
  const float* row = table + id * width_;
  values_.insert(values_.end(), row, row + width_);
}

void RowJournal::swap(float* table) {
  for (size_t k = 0; k < kept_.size(); ++k) {
    float* row = table + kept_[k] * width_;
    std::swap_ranges(row, row + width_, values_.begin() + static_cast<int64_t>(k) * width_);
  }
}

void RowJournal::clear() {
  kept_bits_ = {};
  kept_ = {};
  values_ = {};
  active_ = false;
}

}  // namespace sift
