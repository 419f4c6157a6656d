// How much memory this process may still take: what a size check before allocating
// compares an estimate with.
#pragma once

#include <cstdint>
#include <string>

namespace sift {

struct MemoryLimit {
  uint64_t bytes = 0;  // 0: unknown (no /proc/meminfo)
  std::string source;  // "MemAvailable" or "the cgroup's memory.max"
};

// The smaller of /proc/meminfo's MemAvailable and, inside a cgroup v2 with a limit,
// memory.max less memory.current.
MemoryLimit available_memory();

}  // namespace sift
