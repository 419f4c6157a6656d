// Bytes held by CPU tensors, counted by an allocator that wraps LibTorch's own: the
// peak of a phase of training (phases.h) and of sift-precision-bench. Counting is one
// atomic add per allocation and free (allocations are per tensor, not per element).
// The counts are torch-free (tensor_bytes.cc: a run without LibTorch reads zeros, not
// counted); the allocator is LibTorch's (tensor_memory.cc).
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

// The allocator's side: whether counting starts now (false: it had started), and each
// allocation's and free's bytes.
bool start_counting_tensor_bytes();
void tensor_bytes_allocated(int64_t n);
void tensor_bytes_freed(int64_t n);

}  // namespace sift
