#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <string>

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

// The launcher starts OpenBLAS with one thread (OPENBLAS_NUM_THREADS=1; ctest runs this
// binary so once more): two must then mean two threads that compute the same products.
TEST(ApplyThreads, RaisesOpenBlasAboveTheCountItStartedWith) {
  const char* start = std::getenv("OPENBLAS_NUM_THREADS");
  if (start != nullptr && std::string(start) == "1") {
    EXPECT_EQ(openblas_threads(), 1) << "OpenBLAS did not start with the environment's count";
  }
  torch::manual_seed(3);
  const auto a = torch::randn({384, 256});
  const auto b = torch::randn({256, 320});
  apply_threads(1);
  const auto one = torch::mm(a, b);
  apply_threads(2);
  EXPECT_EQ(openblas_threads(), 2);
  const auto two = torch::mm(a, b);
  EXPECT_TRUE(torch::allclose(one, two, 1e-5, 1e-4));
  EXPECT_FALSE(torch::allclose(one, torch::zeros_like(one)));
  apply_threads(1);
  EXPECT_EQ(openblas_threads(), 1);
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
