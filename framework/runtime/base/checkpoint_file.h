// The checkpoint file's container, without LibTorch: magic number and format version,
// length, CRC-32, the metadata JSON and named sections; and the records of a tensor
// section (name, dtype, shape, bytes, or the rows that differ from a uniform fill).
// framework/runtime/checkpoint.h builds tensors from them; `sift predict`'s torch-free
// fastText path (fasttext_predictor.h) reads them into plain arrays.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/uniform_fill.h"

namespace sift {

// Version 2 adds tensors stored as the rows that differ from their initial uniform fill.
// A file without such a tensor is still written as version 1, which older builds read.
constexpr uint32_t kCheckpointVersion = 2;

// A section load_checkpoint left in its file (after checking the file's CRC). The file
// stays open: a checkpoint renamed over it meanwhile cannot mix into what is read.
struct SectionRef {
  std::string path;
  std::shared_ptr<std::ifstream> file;
  uint64_t offset = 0;  // of the section's first byte
  uint64_t size = 0;
};

// What a checkpoint file holds, as read back.
struct StoredCheckpoint {
  nlohmann::json meta;                       // model type, shape, step, metrics
  std::map<std::string, std::string> blobs;  // "model", "optimizer": their bytes
  // The sections read_checkpoint was asked to leave on disk.
  std::map<std::string, SectionRef> on_disk;
};

// Checks magic, version, length and checksum; throws sift::Error naming the file. The
// sections named in `leave_on_disk` are only located (on_disk), not read.
StoredCheckpoint read_checkpoint(const std::string& path,
                                 const std::vector<std::string>& leave_on_disk = {});

// The file's first bytes: magic, version, length of what follows, its CRC-32.
std::string checkpoint_header(uint32_t version, uint64_t length, uint32_t crc);

// Reads fields from bytes in memory, refusing to run past their end.
class Cursor {
 public:
  Cursor(std::string_view data, const std::string& path) : data_(data), path_(path) {}
  template <class T>
  T get() {
    T v;
    read_into(reinterpret_cast<char*>(&v), sizeof(T));
    return v;
  }
  std::string get_bytes() { return std::string(get_view()); }
  void read_into(char* out, uint64_t n);
  // A length-prefixed field, viewed in place.
  std::string_view get_view();

 private:
  void need(uint64_t n) const;
  std::string_view data_;
  const std::string& path_;
  size_t pos_ = 0;
};

// The same reads from a file's body, straight into their strings: a loaded checkpoint is
// held once, not as the file's bytes and again as its sections.
class FileCursor {
 public:
  // Reads the `length` bytes that start at `offset`.
  FileCursor(std::ifstream& in, uint64_t offset, uint64_t length, const std::string& path);
  FileCursor(const SectionRef& section)
      : FileCursor(*section.file, section.offset, section.size, section.path) {}
  template <class T>
  T get() {
    T v;
    read_into(reinterpret_cast<char*>(&v), sizeof(T));
    return v;
  }
  std::string get_bytes();
  void read_into(char* out, uint64_t n);
  void skip(uint64_t n);
  uint64_t position() const { return position_; }
  const std::string& path() const { return path_; }

 private:
  std::ifstream& in_;
  uint64_t position_;
  uint64_t left_;
  const std::string& path_;
};

// A tensor section: a uint32 count, then per tensor its name, a dtype (LibTorch's
// ScalarType code; kChangedRowsTag, then the code, for a table stored as changed rows),
// its shape, the byte length of its payload and the payload.
constexpr int8_t kChangedRowsTag = -1;  // ScalarType values are never negative
// A changed-rows payload starts with the fill (state, lo, hi) and the number of rows.
constexpr uint64_t kFillBytes = 3 * 8 + 8;
// The ScalarType codes the torch-free reader knows.
constexpr int8_t kFloatCode = 6;
constexpr int8_t kLongCode = 4;

struct TensorRecordHead {
  std::string name;
  bool changed_rows = false;
  int8_t dtype = 0;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;  // of the payload that follows
};

// A [rows, width] float table stored as the rows that differ from its fill.
struct ChangedRows {
  UniformFill fill;
  std::vector<int64_t> indices;  // increasing
  std::vector<float> values;     // indices.size() x width
};

template <class Reader>
TensorRecordHead read_record_head(Reader& reader) {
  TensorRecordHead head;
  head.name = reader.get_bytes();
  const auto tag = reader.template get<int8_t>();
  head.changed_rows = tag == kChangedRowsTag;
  head.dtype = head.changed_rows ? reader.template get<int8_t>() : tag;
  head.shape.resize(reader.template get<uint32_t>());
  for (auto& d : head.shape) d = reader.template get<int64_t>();
  head.bytes = reader.template get<uint64_t>();
  return head;
}

// Throws sift::Error: `path` is a corrupted checkpoint (tensor `name`).
[[noreturn]] void throw_corrupted_tensor(const std::string& path, const std::string& name);

// The payload of a changed-rows record whose head is `head`; sift::Error naming `path`
// and the tensor when it does not hold together.
template <class Reader>
ChangedRows read_changed_rows(Reader& reader, const TensorRecordHead& head,
                              const std::string& path) {
  if (head.dtype != kFloatCode || head.shape.size() != 2 || head.bytes < kFillBytes) {
    throw_corrupted_tensor(path, head.name);
  }
  const int64_t rows = head.shape[0], width = head.shape[1];
  const uint64_t row_bytes = static_cast<uint64_t>(width) * sizeof(float);
  ChangedRows out;
  out.fill.state = reader.template get<uint64_t>();
  out.fill.lo = reader.template get<double>();
  out.fill.hi = reader.template get<double>();
  const auto k = reader.template get<uint64_t>();
  if (k > static_cast<uint64_t>(rows) || head.bytes != kFillBytes + k * (8 + row_bytes)) {
    throw_corrupted_tensor(path, head.name);
  }
  out.indices.resize(k);
  reader.read_into(reinterpret_cast<char*>(out.indices.data()), k * 8);
  for (uint64_t i = 0; i < k; ++i) {
    if (out.indices[i] < 0 || out.indices[i] >= rows ||
        (i > 0 && out.indices[i] <= out.indices[i - 1])) {
      throw_corrupted_tensor(path, head.name);
    }
  }
  out.values.resize(k * static_cast<uint64_t>(width));
  reader.read_into(reinterpret_cast<char*>(out.values.data()), k * row_bytes);
  return out;
}

}  // namespace sift
