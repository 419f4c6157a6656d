#include "core/memory.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <fstream>
#include <sstream>

namespace sift {
namespace {

// The first number in a file, or 0 ("max", missing file).
uint64_t number_in(const std::string& path) {
  std::ifstream in(path);
  uint64_t v = 0;
  return in >> v ? v : 0;
}

// The bytes of a "Key:   N kB" line of a /proc file (/proc/meminfo, /proc/self/status);
// 0 when it has none.
uint64_t kib_line(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    std::istringstream fields(line.substr(key.size()));
    uint64_t kib = 0;
    fields >> kib;
    return kib * 1024;
  }
  return 0;
}

}  // namespace

MemoryLimit available_memory() {
  MemoryLimit limit{kib_line("/proc/meminfo", "MemAvailable:"), "MemAvailable in /proc/meminfo"};
  const uint64_t max = number_in("/sys/fs/cgroup/memory.max");
  const uint64_t current = number_in("/sys/fs/cgroup/memory.current");
  if (max > 0 && max > current && (limit.bytes == 0 || max - current < limit.bytes)) {
    limit = {max - current, "the cgroup's memory.max"};
  }
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const uint64_t used = kib_line("/proc/self/status", "VmSize:");     // address space held
    const uint64_t left = as.rlim_cur > used ? as.rlim_cur - used : 1;  // 0 reads as unknown
    if (limit.bytes == 0 || left < limit.bytes) {
      limit = {left, fmt::format("ulimit -v {} KiB less this process's {} MiB of address space",
                                 as.rlim_cur / 1024, used >> 20)};
    }
  }
  return limit;
}

}  // namespace sift
