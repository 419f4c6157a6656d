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
};

class ExampleStream {
 public:
  ExampleStream(std::vector<std::string> files, TextFormat format,
                std::vector<std::string> label_names, HashPart part = HashPart::all,
                double valid_split = 0.0, uint64_t seed = 0);

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
};

// 64-bit FNV-1a of the bytes mixed with a seed: a stable record hash.
uint64_t record_hash(const std::string& text, uint64_t seed);

// Records whose hash is below this are the validation share `share` of the data.
uint64_t valid_threshold(double share);

// Whether a record of this text belongs to `part` of the hash split.
inline bool in_part(const std::string& text, HashPart part, uint64_t threshold, uint64_t seed) {
  return part == HashPart::all || (part == HashPart::valid) == (record_hash(text, seed) < threshold);
}

}  // namespace sift
