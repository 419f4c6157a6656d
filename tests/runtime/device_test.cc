#include "framework/runtime/device.h"

#include <gtest/gtest.h>

#include "tests/test_files.h"

namespace sift {
namespace device_test {

TEST(Device, CudaIndexIsTheLocalRank) {
  EXPECT_EQ(cuda_device_index(nullptr, 4), 0);
  EXPECT_EQ(cuda_device_index("", 4), 0);
  EXPECT_EQ(cuda_device_index("0", 4), 0);
  EXPECT_EQ(cuda_device_index("3", 4), 3);
  EXPECT_NE(testing::error_of([] { cuda_device_index("4", 4); }).find("4 CUDA devices"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] { cuda_device_index("x", 4); }).find("LOCAL_RANK='x'"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] { cuda_device_index("-1", 2); }).find("LOCAL_RANK"),
            std::string::npos);
}

TEST(Device, CpuStaysCpu) { EXPECT_TRUE(parse_device("cpu").is_cpu()); }

}  // namespace device_test
}  // namespace sift
