// Allocation failures as one line naming what was being allocated and the keys that size
// it: a `std::bad_alloc` (or LibTorch's "can't allocate memory") used to end a run as a
// bare `sift: error: std::bad_alloc`. An `Allocating` scope around a large allocation
// records, when the allocation throws, what it was; the program's last catch asks for the
// line (out_of_memory_line).
#pragma once

#include <cstdint>
#include <string>

namespace sift {

class Allocating {
 public:
  // `what`: "the fasttext model's weights"; `keys`: "model.dim, model.buckets"; `bytes`:
  // the estimate (0: unknown).
  Allocating(std::string what, std::string keys, uint64_t bytes = 0);
  ~Allocating();
  Allocating(const Allocating&) = delete;
  Allocating& operator=(const Allocating&) = delete;

 private:
  std::string what_, keys_;
  uint64_t bytes_;
  int exceptions_;  // uncaught when the scope began
};

// The one line (without "sift: error: ") for a failed allocation: what the innermost
// Allocating scope that an exception left was allocating, the keys that size it, the
// size (`detail`: LibTorch's "you tried to allocate N bytes" when it said so), and the
// memory this process may take (available_memory: MemAvailable, a cgroup's memory.max or
// ulimit -v).
std::string out_of_memory_line(const std::string& detail = "");

// Whether `message` is LibTorch's allocator saying it could not allocate.
bool is_allocation_failure(const std::string& message);

}  // namespace sift
