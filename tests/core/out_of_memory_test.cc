// An allocation failure as one line naming what was being allocated and its keys, and the
// memory left under `ulimit -v` (issue #42: a bare `sift: error: std::bad_alloc`).
#include "core/out_of_memory.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdint>
#include <fstream>
#include <new>
#include <string>

#include "core/memory.h"

namespace sift {
namespace out_of_memory_test {

// Allocates `bytes` inside an Allocating scope, as a model's tables are; the failure is
// caught outside the scope, as main's last catch is.
std::string failed_line(size_t bytes) {
  try {
    const Allocating scope("the test table", "model.dim, model.buckets", bytes);
    volatile char* p = new char[bytes];
    p[0] = 1;
    delete[] p;
  } catch (const std::bad_alloc&) {
    return out_of_memory_line();
  }
  return "allocated";
}

TEST(OutOfMemory, AFailedAllocationNamesWhatWasAllocatedItsKeysAndSize) {
  const std::string line = failed_line(size_t{1} << 60);  // 1 EiB: never granted
  EXPECT_EQ(line.rfind("out of memory allocating the test table, about ", 0), 0u) << line;
  EXPECT_NE(line.find("1.07e+09 GiB"), std::string::npos) << line;
  EXPECT_NE(line.find("(sized by model.dim, model.buckets)"), std::string::npos) << line;
  EXPECT_NE(line.find("available ("), std::string::npos) << line;
}

TEST(OutOfMemory, LibTorchsAllocatorMessageGivesTheSize) {
  EXPECT_TRUE(is_allocation_failure(
      "[enforce fail at alloc_cpu.cpp:75] . DefaultCPUAllocator: can't allocate memory: you "
      "tried to allocate 8000000000 bytes. Error code 12 (Cannot allocate memory)"));
  EXPECT_FALSE(is_allocation_failure("shape mismatch"));
  EXPECT_NE(out_of_memory_line("you tried to allocate 8589934592 bytes").find("8 GiB"),
            std::string::npos);
}

TEST(OutOfMemory, UlimitVBoundsTheMemoryAvailable) {
  rlimit was{};
  ASSERT_EQ(::getrlimit(RLIMIT_AS, &was), 0);
  uint64_t vm = 0;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmSize:", 0) == 0) vm = std::stoull(line.substr(7)) * 1024;
  }
  ASSERT_GT(vm, 0u);
  rlimit lower = was;
  lower.rlim_cur = vm + (uint64_t{256} << 20);  // 256 MiB more than this process holds
  if (was.rlim_cur != RLIM_INFINITY && was.rlim_cur < lower.rlim_cur) GTEST_SKIP();
  ASSERT_EQ(::setrlimit(RLIMIT_AS, &lower), 0);
  const MemoryLimit limit = available_memory();
  ASSERT_EQ(::setrlimit(RLIMIT_AS, &was), 0);
  EXPECT_LE(limit.bytes, uint64_t{257} << 20);
  EXPECT_GT(limit.bytes, uint64_t{200} << 20);
  EXPECT_EQ(limit.source.rfind("ulimit -v ", 0), 0u) << limit.source;
}

}  // namespace out_of_memory_test
}  // namespace sift
