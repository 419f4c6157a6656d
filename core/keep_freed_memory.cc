#include "core/keep_freed_memory.h"

#include <malloc.h>

namespace sift {

void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

}  // namespace sift
