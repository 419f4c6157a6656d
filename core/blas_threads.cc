#include "core/blas_threads.h"

#include <dlfcn.h>

namespace sift {

std::string set_blas_threads(int threads) {
  // Looked up at run time: the BLAS is whatever libblas.so.3 the system's alternatives
  // point to, and only OpenBLAS has this entry point.
  using SetThreads = void (*)(int);
  auto* set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (set == nullptr) return "";
  set(threads < 1 ? 1 : threads);
  return "openblas";
}

}  // namespace sift
