// The BLAS library's own thread pool, which LibTorch's thread count does not reach.
#pragma once

#include <string>

namespace sift {

// OpenBLAS built with pthreads (Debian's libopenblas0-pthread, LibTorch's BLAS here) keeps
// its own pool of one thread per core: at::set_num_threads(1) left every product above
// 64k x 4 multiply-adds on two threads. Waking the second thread costs more than it
// saves on a small product: a 40x128 by 128x128 product took 34 us on two threads and
// 22 us on one, 40x64 by 64x128 27 us and 13 us (Python, medians of 15 x 200 calls,
// bench/RESULTS.md "Structured pruning"). Tells the BLAS found in the process to use
// `threads` threads; returns its name ("openblas"), or "" when the process has no BLAS
// that can be told (the reference BLAS is single-threaded).
std::string set_blas_threads(int threads);

}  // namespace sift
