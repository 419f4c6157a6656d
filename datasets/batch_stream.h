// Batches of encoded examples from an example stream, shuffled through a bounded buffer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/batch.h"
#include "datasets/example_stream.h"
#include "datasets/labels.h"
#include "datasets/shuffle_buffer.h"
#include "datasets/text_encoder.h"

namespace sift {

class BatchStream {
 public:
  // shuffle_buffer <= 1 keeps the file order. `labels` maps names to ids; a record whose
  // label is not in it is an error naming its file and line.
  BatchStream(ExampleStream& examples, TextEncoder& encoder, const LabelSet& labels,
              int64_t batch_size, int64_t shuffle_buffer, uint64_t seed);

  // Rewinds the stream; each epoch gets its own shuffle order.
  void start_epoch(uint64_t epoch);
  // Fills the next batch; false at the end of the epoch.
  bool next(RawBatch& batch);

 private:
  struct Item {
    Example example;
    std::string file;
  };
  bool next_example(Item& item);
  void append(const Item& item, RawBatch& batch);

  ExampleStream& examples_;
  TextEncoder& encoder_;
  const LabelSet& labels_;
  int64_t batch_size_;
  uint64_t seed_;
  ShuffleBuffer<Item> buffer_;
  bool shuffle_;
  bool exhausted_ = false;
  std::vector<int64_t> ids_;
};

}  // namespace sift
