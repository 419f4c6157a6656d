#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "core/blas_threads.h"
#include "framework/runtime/compute_threads.h"

namespace sift {
namespace apply_threads_test {

// OpenBLAS's own count, read back through its C entry point.
int openblas_threads() {
  using GetThreads = int (*)();
  auto* get = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  return get == nullptr ? -1 : get();
}

TEST(ApplyThreads, SetsLibTorchAndOpenBlasToTheSameCount) {
  const int before = at::get_num_threads();
  ASSERT_NE(openblas_threads(), -1) << "LibTorch's BLAS here is OpenBLAS (README packages)";
  apply_threads(1);
  EXPECT_EQ(at::get_num_threads(), 1);
  EXPECT_EQ(openblas_threads(), 1);
  apply_threads(2);
  EXPECT_EQ(at::get_num_threads(), 2);
  EXPECT_EQ(openblas_threads(), 2);
  apply_threads(before);
}

TEST(ApplyThreads, NamesTheBlasItTold) {
  EXPECT_EQ(set_blas_threads(1), "openblas");
  EXPECT_EQ(openblas_threads(), 1);
  EXPECT_EQ(set_blas_threads(0), "openblas");  // below one means one
  EXPECT_EQ(openblas_threads(), 1);
  apply_threads(at::get_num_threads());
}

}  // namespace apply_threads_test
}  // namespace sift
