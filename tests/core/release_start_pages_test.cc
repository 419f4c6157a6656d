#include "core/release_start_pages.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "core/crc32.h"

namespace sift {
namespace release_start_pages_test {

// Resident bytes of this process that are mapped from files (statm: shared pages).
int64_t resident_file_bytes() {
  std::ifstream in("/proc/self/statm");
  int64_t size = 0, resident = 0, shared = 0;
  in >> size >> resident >> shared;
  return shared * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

TEST(ReleaseStartPages, GivesBackFilePagesAndTheCodeStillRuns) {
  const int64_t before = resident_file_bytes();
  const int64_t released = release_start_pages();
  const int64_t after = resident_file_bytes();
  EXPECT_GT(released, 0);
  EXPECT_LT(after, before);
  // The released code and read-only data come back from their files when used.
  EXPECT_EQ(fmt::format("{}-{}", "a", 42), "a-42");
  EXPECT_EQ(crc32_of("123456789"), 0xCBF43926u);
}

TEST(ReleaseStartPages, CanBeCalledAgain) {
  release_start_pages();
  EXPECT_GE(release_start_pages(), 0);
  EXPECT_EQ(std::string(3, 'x'), "xxx");
}

}  // namespace release_start_pages_test
}  // namespace sift
