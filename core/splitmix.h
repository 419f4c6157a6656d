// SplitMix64: a tiny, fast, fixed random number generator and bit mixer. Fixed
// algorithms (not std:: distributions, whose output differs between standard
// libraries) keep seeded output identical everywhere.
#pragma once

#include <cstdint>

namespace sift {

// Finalising mix of a 64-bit value: every input bit affects every output bit.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

inline constexpr uint64_t kSplitMixGamma = 0x9E3779B97F4A7C15ULL;

// Advances `state` and returns the next random value.
inline uint64_t splitmix64(uint64_t& state) { return mix64(state += kSplitMixGamma); }

// A uniform double in [0, 1) from the next 53 bits of `state`.
inline double splitmix_uniform(uint64_t& state) {
  return static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
}

// The n-th value (n >= 1) splitmix64 would return from `state`, without advancing it:
// parts of a sequence can be drawn in parallel.
inline uint64_t splitmix64_nth(uint64_t state, uint64_t n) {
  return mix64(state + kSplitMixGamma * n);
}

}  // namespace sift
