// Writes checkpoint files (checkpoint_file.h's container and tensor records) from tensors
// given as plain memory: LibTorch's (checkpoint.h) and the torch-free fastText trainer's
// (framework/train/base/lite_trainer.h) alike, byte for byte the same file.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/uniform_fill.h"

namespace sift {

// A contiguous tensor to write, read in place (nothing is copied).
struct TensorView {
  std::string name;
  int8_t dtype = 0;  // checkpoint_file.h's codes: LibTorch's ScalarType numbers
  std::vector<int64_t> shape;
  const void* data = nullptr;
  size_t element_size = 0;
  // Instead of `data`: a tensor whose memory is filled only when its bytes are written
  // (run.shard: parameters: a layer gathered from every rank), in the file's order; the
  // bytes it returns stay until the next fetch. Such a tensor is written dense, but for the
  // section's last one with a fill: fetched when the section is laid out, it is stored as
  // its changed rows where those are under half of it, as in memory.
  std::function<const void*()> fetch;

  size_t bytes() const;
};

// A section whose bytes a function hands over while the file is written, `size` of them
// exactly (known beforehand: the section's length precedes it): an optimizer's archive
// whose state is gathered a tensor at a time (run.shard). The bytes given to `sink` are
// written or copied when it returns.
struct StreamedSection {
  uint64_t size = 0;
  std::function<void(const std::function<void(std::string_view)>& sink)> write;
};

// Runs fn(begin, end) over parts of [0, n) (LibTorch's thread pool, or one loop).
using ParallelFor = std::function<void(int64_t n, const std::function<void(int64_t, int64_t)>& fn)>;

// What one checkpoint file holds. Sections are written in name order, blobs as they are,
// tensor sections as records (count; then name, dtype, shape, byte length, bytes); a
// tensor in `fills` as the rows that differ from its fill when that is under half its size.
struct CheckpointParts {
  nlohmann::json meta;
  std::map<std::string, std::string_view> blobs;           // read in place
  std::map<std::string, std::vector<TensorView>> tensors;  // names must differ from blobs'
  std::map<std::string, TensorFills> fills;                // by section, then tensor name
  std::map<std::string, StreamedSection> streams;          // names must differ from the rest's
};

// Written to a temporary name, synced and renamed (core/atomic_file.h) in one pass over
// the pieces: the CRC is taken as they are written and the header rewritten after them;
// the file's bytes are never gathered.
void write_checkpoint(const std::string& path, const CheckpointParts& parts,
                      const ParallelFor& parallel = {});

// A tensor section's bytes (dense records, no fills), gathered.
std::string tensor_records(const std::vector<TensorView>& tensors);

}  // namespace sift
