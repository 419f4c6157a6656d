#include "datasets/batch_stream.h"

#include <fmt/format.h>

#include "framework/error.h"

namespace sift {

BatchStream::BatchStream(ExampleStream& examples, TextEncoder& encoder, const LabelSet& labels,
                         int64_t batch_size, int64_t shuffle_buffer, uint64_t seed)
    : examples_(examples),
      encoder_(encoder),
      labels_(labels),
      batch_size_(batch_size),
      seed_(seed),
      buffer_(static_cast<size_t>(std::max<int64_t>(shuffle_buffer, 1)), seed),
      shuffle_(shuffle_buffer > 1) {}

void BatchStream::start_epoch(uint64_t epoch) {
  examples_.rewind();
  buffer_.reset(seed_ * 1000003ULL + epoch);
  exhausted_ = false;
}

bool BatchStream::next_example(Item& item) {
  if (!shuffle_) {
    if (!examples_.next(item.example)) return false;
    item.file = examples_.current_file();
    return true;
  }
  while (!exhausted_ && !buffer_.full()) {
    Item fresh;
    if (!examples_.next(fresh.example)) {
      exhausted_ = true;
      break;
    }
    fresh.file = examples_.current_file();
    buffer_.push(std::move(fresh));
  }
  if (buffer_.empty()) return false;
  buffer_.pop(item);
  return true;
}

void BatchStream::append(const Item& item, RawBatch& batch) {
  const auto& ex = item.example;
  if (ex.labels.size() != 1) {
    throw Error(fmt::format("{}:{}: the record has {} labels; this task takes exactly one",
                            item.file, ex.line, ex.labels.size()));
  }
  const int64_t label = labels_.id(ex.labels[0]);
  if (label < 0) {
    throw Error(fmt::format("{}:{}: label '{}' is not one of the model's labels ({})", item.file,
                            ex.line, ex.labels[0], fmt::join(labels_.names(), ", ")));
  }
  encoder_.encode(ex.text, ids_);
  batch.offsets.push_back(static_cast<int64_t>(batch.ids.size()));
  batch.ids.insert(batch.ids.end(), ids_.begin(), ids_.end());
  batch.labels.push_back(label);
}

bool BatchStream::next(RawBatch& batch) {
  batch.clear();
  Item item;
  while (batch.size() < batch_size_ && next_example(item)) append(item, batch);
  return batch.size() > 0;
}

}  // namespace sift
