// The records of one data split, read as a stream; optionally only the training or only
// the validation part of a deterministic hash split of the same files.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "datasets/example.h"
#include "datasets/record_reader.h"
#include "datasets/text_format.h"

namespace sift {

// Which records of the files a stream yields.
enum class HashPart {
  all,
  train,  // those not chosen for validation
  valid,  // the share `valid_split` chosen by hash
  held_out,  // cross-validation: the records of the held-out fold
};

// Cross-validation: with count > 0, records fall by hash into `count` folds, and fold
// `index` is held out (HashPart::held_out); train and valid split the other folds.
struct Folds {
  int64_t count = 0;
  int64_t index = 0;
};

class ExampleStream {
 public:
  ExampleStream(std::vector<std::string> files, TextFormat format,
                std::vector<std::string> label_names, HashPart part = HashPart::all,
                double valid_split = 0.0, uint64_t seed = 0, Folds folds = {});

  bool next(Example& out);
  void rewind();
  uint64_t skipped() const { return reader_.skipped(); }
  const std::string& current_file() const { return reader_.current_file(); }
  const std::vector<std::string>& files() const { return files_; }

 private:
  bool wanted(const Example& example) const;

  std::vector<std::string> files_;
  RecordReader reader_;
  HashPart part_;
  uint64_t threshold_;  // valid_threshold(valid_split)
  uint64_t seed_;
  Folds folds_;
};

// 64-bit FNV-1a of the bytes mixed with a seed: a stable record hash.
uint64_t record_hash(const std::string& text, uint64_t seed);

// Records whose hash is below this are the validation share `share` of the data.
uint64_t valid_threshold(double share);

// The fold (0..count-1) of a record hash.
inline int64_t fold_of(uint64_t hash, int64_t count) {
  return static_cast<int64_t>((static_cast<unsigned __int128>(hash) * static_cast<uint64_t>(count)) >> 64);
}

// Whether a record of this text belongs to `part` of the hash split.
bool in_part(const std::string& text, HashPart part, uint64_t threshold, uint64_t seed,
             Folds folds);
inline bool in_part(const std::string& text, HashPart part, uint64_t threshold, uint64_t seed) {
  if (part == HashPart::all) return true;
  // Nothing held out (the fastText model's default valid_split 0): no hash to take. It was
  // 4.7% of a 1M-line run's samples, taken for every line of every pass.
  if (threshold == 0) return part != HashPart::valid;
  return (part == HashPart::valid) == (record_hash(text, seed) < threshold);
}

}  // namespace sift
