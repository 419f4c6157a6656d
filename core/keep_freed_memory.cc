#include "core/keep_freed_memory.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace sift {

void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  // As many arenas as cores, not glibc's 8 per core: each arena keeps what its threads
  // freed (the trim threshold above), and the data workers and Hogwild threads of every
  // epoch took new ones. 20NG on two Hogwild threads, 50 epochs, alternating with
  // MALLOC_ARENA_MAX=16: peak RSS 711 -> 633-641 MB, wall time within the noise
  // (bench/RESULTS.md, "Peak RSS near fastText's"). Unless the user chose (the
  // environment variable or the tunable, which glibc read at start).
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const bool chosen = std::getenv("MALLOC_ARENA_MAX") != nullptr ||
                      (tunables != nullptr && std::strstr(tunables, "glibc.malloc.arena_max"));
  if (!chosen) {
    mallopt(M_ARENA_MAX, static_cast<int>(std::max(2u, std::thread::hardware_concurrency())));
  }
}

}  // namespace sift
