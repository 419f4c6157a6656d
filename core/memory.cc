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

// /proc/self/status's VmSize: the address space this process holds now.
uint64_t vm_size() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmSize:", 0) != 0) continue;
    std::istringstream fields(line.substr(7));
    uint64_t kib = 0;
    fields >> kib;
    return kib * 1024;
  }
  return 0;
}

uint64_t mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    uint64_t kib = 0;
    fields >> kib;
    return kib * 1024;
  }
  return 0;
}

}  // namespace

MemoryLimit available_memory() {
  MemoryLimit limit{mem_available(), "MemAvailable in /proc/meminfo"};
  const uint64_t max = number_in("/sys/fs/cgroup/memory.max");
  const uint64_t current = number_in("/sys/fs/cgroup/memory.current");
  if (max > 0 && max > current && (limit.bytes == 0 || max - current < limit.bytes)) {
    limit = {max - current, "the cgroup's memory.max"};
  }
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const uint64_t used = vm_size();
    const uint64_t left = as.rlim_cur > used ? as.rlim_cur - used : 1;  // 0 reads as unknown
    if (limit.bytes == 0 || left < limit.bytes) {
      limit = {left, fmt::format("ulimit -v {} KiB less this process's {} MiB of address space",
                                 as.rlim_cur / 1024, used >> 20)};
    }
  }
  return limit;
}

}  // namespace sift
