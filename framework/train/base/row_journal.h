// A float table's rows as they stood when the journal started, each kept just before its
// first change: the fastText learner's best weights (lite_trainer.cc) without a second
// table or a best.ckpt written each time training goes on from them. An SST-2 epoch
// changes about 100k of the 2M bucket rows, 4 MB against the table's 80 MB.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace sift {

class RowJournal {
 public:
  // A table of `rows` rows of `width` floats.
  RowJournal(int64_t rows, int64_t width)
      : rows_(rows), width_(width), block_rows_(std::max<int64_t>(1, kBlockFloats / width)) {}

  // Starts over: from here the journal keeps the table as it is now.
  void start();
  // Keeps each row of `ids` that it does not hold yet, from `table`, before a step
  // changes it. Ids outside the table are left to the step's own check.
  void keep(const float* table, const int64_t* ids, int64_t n) {
    for (int64_t k = 0; k < n; ++k) {
      const int64_t id = ids[k];
      if (id < 0 || id >= rows_) continue;
      uint64_t& word = kept_bits_[static_cast<uint64_t>(id) >> 6];
      const uint64_t bit = uint64_t{1} << (id & 63);
      if ((word & bit) == 0) {
        word |= bit;
        add(table, id);
      }
    }
  }
  // Swaps the kept rows with `table`'s: the table then holds the journal's state and the
  // journal the table's; a second swap undoes the first.
  void swap(float* table);
  // Ends it and frees its memory.
  void clear();

  bool active() const { return active_; }
  // The kept rows' values, in bytes.
  int64_t bytes() const {
    return kept_ * (width_ * static_cast<int64_t>(sizeof(float)) + int64_t{sizeof(int64_t)});
  }

 private:
  void add(const float* table, int64_t id);

  // The kept rows in blocks of block_rows_, each reserved whole: one growing vector, when it
  // moved, held its old and new buffers at once, and the journal's share of sift-lite's
  // SST-2 peak heap was 6.3 MB (heaptrack) for about 2 MB of rows.
  static constexpr int64_t kBlockFloats = int64_t{1} << 16;
  struct Block {
    std::vector<int64_t> ids;   // the kept rows, in the order they were kept
    std::vector<float> values;  // their values, width_ each
  };

  int64_t rows_, width_, block_rows_;
  bool active_ = false;
  int64_t kept_ = 0;
  std::vector<uint64_t> kept_bits_;  // a bit a row: kept
  std::vector<Block> blocks_;
};

}  // namespace sift
