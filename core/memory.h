// How much memory this process may still take: what a size check before allocating
// compares an estimate with.
#pragma once

#include <cstdint>
#include <string>

namespace sift {

struct MemoryLimit {
  uint64_t bytes = 0;  // 0: unknown (no /proc/meminfo)
  std::string source;  // "MemAvailable ...", "the cgroup's memory.max" or "ulimit -v ..."
};

// The smallest of /proc/meminfo's MemAvailable; inside a cgroup v2 with a limit,
// memory.max less memory.current; and under `ulimit -v` (RLIMIT_AS), the limit less this
// process's address space now (VmSize).
MemoryLimit available_memory();

}  // namespace sift
