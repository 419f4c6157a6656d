#include "core/memory.h"

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
  return limit;
}

}  // namespace sift
