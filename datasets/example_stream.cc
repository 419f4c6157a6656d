#include "datasets/example_stream.h"

#include <cmath>
#include <limits>

#include "core/splitmix.h"

namespace sift {

uint64_t record_hash(const std::string& text, uint64_t seed) {
  uint64_t h = 1469598103934665603ULL ^ (seed * 0x9E3779B97F4A7C15ULL);
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  // Final avalanche so that the low share of hashes is a uniform sample.
  return mix64(h);
}

ExampleStream::ExampleStream(std::vector<std::string> files, TextFormat format,
                             std::vector<std::string> label_names, HashPart part,
                             double valid_split, uint64_t seed, Folds folds)
    : files_(files),
      reader_(std::move(files), format, std::move(label_names)),
      part_(part),
      threshold_(valid_threshold(valid_split)),
      seed_(seed),
      folds_(folds) {}

uint64_t valid_threshold(double share) {
  const double scaled = std::ldexp(share, 64);
  return scaled >= std::ldexp(1.0, 64) ? std::numeric_limits<uint64_t>::max()
                                       : static_cast<uint64_t>(scaled);
}

bool in_part(const std::string& text, HashPart part, uint64_t threshold, uint64_t seed,
             Folds folds) {
  if (folds.count == 0) return in_part(text, part, threshold, seed);
  uint64_t h = record_hash(text, seed);
  const bool held_out = fold_of(h, folds.count) == folds.index;
  if (part == HashPart::held_out || held_out) return part == HashPart::held_out && held_out;
  // The validation share of the other folds: a second hash, so that it does not
  // coincide with a fold (valid_split 0.1 and 10 folds would pick fold 0 otherwise).
  h = mix64(h ^ 0x5bd1e9955bd1e995ULL);
  return part == HashPart::all || (part == HashPart::valid) == (h < threshold);
}

bool ExampleStream::wanted(const Example& example) const {
  return in_part(example.text, part_, threshold_, seed_, folds_);
}

bool ExampleStream::next(Example& out) {
  while (reader_.next(out)) {
    if (wanted(out)) return true;
  }
  return false;
}

void ExampleStream::rewind() { reader_.rewind(); }

}  // namespace sift
