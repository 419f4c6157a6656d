// How many threads compute: LibTorch's pool and the BLAS's, set together.
#pragma once

#include <cstdint>

namespace sift {

// Sets LibTorch's and the BLAS's thread counts (0: all cores). OpenBLAS's pool is its
// own and at::set_num_threads does not reach it (core/blas_threads.h).
void apply_threads(int64_t threads);

}  // namespace sift
