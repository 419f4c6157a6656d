#include "datasets/example_stream.h"

#include <cmath>
#include <limits>

namespace sift {

uint64_t record_hash(const std::string& text, uint64_t seed) {
  uint64_t h = 1469598103934665603ULL ^ (seed * 0x9E3779B97F4A7C15ULL);
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  // Final avalanche (splitmix64) so that the low share of hashes is a uniform sample.
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBULL;
  return h ^ (h >> 31);
}

ExampleStream::ExampleStream(std::vector<std::string> files, TextFormat format,
                             std::vector<std::string> label_names, HashPart part,
                             double valid_split, uint64_t seed)
    : files_(files),
      reader_(std::move(files), format, std::move(label_names)),
      part_(part),
      threshold_(static_cast<uint64_t>(
          std::ldexp(valid_split, 64) >= std::ldexp(1.0, 64)
              ? std::numeric_limits<uint64_t>::max()
              : std::ldexp(valid_split, 64))),
      seed_(seed) {}

bool ExampleStream::wanted(const Example& example) const {
  if (part_ == HashPart::all) return true;
  const bool in_valid = record_hash(example.text, seed_) < threshold_;
  return (part_ == HashPart::valid) == in_valid;
}

bool ExampleStream::next(Example& out) {
  while (reader_.next(out)) {
    if (wanted(out)) return true;
  }
  return false;
}

void ExampleStream::rewind() { reader_.rewind(); }

}  // namespace sift
