#include "framework/runtime/compute_threads.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <thread>

#include "core/blas_threads.h"

namespace sift {

void apply_threads(int64_t threads) {
  const int n = threads > 0 ? static_cast<int>(threads)
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(n);
  set_blas_threads(n);
}

}  // namespace sift
