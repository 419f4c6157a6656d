// A bounded shuffle buffer: holds at most `capacity` items and, once full, hands out a
// uniformly chosen one for each new item. Memory is bounded whatever the stream size.
// The one shuffle buffer of datasets/: shard writing and ShardedStream both use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace sift {

template <class T>
class ShuffleBuffer {
 public:
  explicit ShuffleBuffer(size_t capacity, uint64_t seed = std::mt19937_64::default_seed)
      : capacity_(capacity), rng_(seed) {}

  bool full() const { return items_.size() >= capacity_; }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }

  // Adds an item; call only when !full().
  void push(T item) { items_.push_back(std::move(item)); }

  // Removes a uniformly chosen item into `out` (swap-with-last keeps it O(1)).
  void pop(T& out) {
    std::uniform_int_distribution<size_t> pick(0, items_.size() - 1);
    const size_t i = pick(rng_);
    std::swap(items_[i], items_.back());
    out = std::move(items_.back());
    items_.pop_back();
  }

  void reset(uint64_t seed) {
    items_.clear();
    rng_.seed(seed);
  }
  void clear() { items_.clear(); }

  // The items held, in buffer order (a saved stream position stores them).
  const std::vector<T>& items() const { return items_; }
  // The generator pop draws from: an owner whose other random choices share its sequence
  // (ShardedStream's length buckets) draws from it too, and saves and restores it.
  std::mt19937_64& rng() { return rng_; }
  const std::mt19937_64& rng() const { return rng_; }

 private:
  size_t capacity_;
  std::mt19937_64 rng_;
  std::vector<T> items_;
};

}  // namespace sift
