// Bytes held by CPU tensors, counted by an allocator that wraps LibTorch's own: the
// peak of a phase of training (phases.h) and of sift-precision-bench. Counting is one
// atomic add per allocation and free (allocations are per tensor, not per element).
#pragma once

#include <cstdint>

namespace sift {

// Makes every later CPU tensor allocation counted (tensors made before keep their own
// deleter and are not counted when freed). Safe to call more than once.
void count_tensor_memory();
bool tensor_memory_counted();

int64_t live_tensor_bytes();
// The highest live_tensor_bytes() since the last reset_peak_tensor_bytes().
int64_t peak_tensor_bytes();
void reset_peak_tensor_bytes();

}  // namespace sift
