// glibc's allocator tuned for LibTorch's many short-lived tensors of a few MB.
#pragma once

namespace sift {

// LibTorch allocates every intermediate tensor afresh. glibc serves a block past its mmap
// threshold from new pages and returns the heap's top to the kernel past its trim
// threshold, so a tensor of a few MB cost page faults at every op. Blocks up to 32 MB
// (glibc's cap) come from the heap, and up to 256 MB of freed heap stays: measured with
// GLIBC_TUNABLES, interleaved pairs, bench/RESULTS.md "Memory allocation": a 10,000-label
// hs run 20.3 s -> 7.7 s (its system time 12.7 s -> 3.3 s), TextCNN on SMS spam -17%,
// the Transformer -13%, the 1M-line fastText run unchanged; peak RSS within 1% but one
// Transformer run of two (+14%). It also caps malloc's arenas at the number of cores.
// Call it first thing in main().
void keep_freed_memory();

}  // namespace sift
