#include "core/uniform_fill.h"

namespace sift {

namespace {

// One loop, compiled for AVX-512 (x86-64-v4), AVX2 (v3) and plain x86-64, chosen when the
// program loads. CMakeLists.txt compiles this file with -ffp-contract=off: v3 and v4 have
// fused multiply-add, and `lo + x * scale` contracted into one would round once where
// at() rounds twice, and a recomputed fill would differ from the table's.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void fill_values(uint64_t state, double lo, double scale, uint64_t first, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t bits = splitmix64_nth(state, first + i + 1);
    out[i] = static_cast<float>(lo + static_cast<double>(bits >> 40) * scale);
  }
}

}  // namespace

void UniformFill::values(uint64_t first, float* out, size_t n) const {
  fill_values(state, lo, (hi - lo) / 16777216.0, first, out, n);
}

}  // namespace sift
