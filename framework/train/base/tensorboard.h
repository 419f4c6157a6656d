// TensorBoard event files written by hand: no protobuf library may share a process with
// LibTorch's (../shared/NOTES.md), and scalars need only a few fields. A file is a
// sequence of TFRecords (uint64 length, masked CRC-32C of the length, the bytes, masked
// CRC-32C of the bytes), each an Event message (tensorflow/core/util/event.proto):
// wall_time = 1 (double), step = 2 (int64), file_version = 3 (string), summary = 5
// (Summary: repeated Value value = 1; Value: tag = 1 (string), simple_value = 2 (float)).
// Text (TensorBoard's text plugin, rendered as markdown) is a Value with metadata = 9
// (SummaryMetadata: plugin_data = 1, PluginData: plugin_name = 1 "text") and tensor = 8
// (TensorProto, tensorflow/core/framework/tensor.proto: dtype = 1 DT_STRING (7),
// tensor_shape = 2 (TensorShapeProto: dim = 2, Dim: size = 1), string_val = 8), shaped
// [1] as PyTorch's SummaryWriter.add_text writes it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace sift {

// CRC-32C (Castagnoli), and TFRecord's masking of it.
uint32_t crc32c(std::string_view bytes);
uint32_t masked_crc32c(std::string_view bytes);

// One TFRecord holding `data`.
std::string tf_record(std::string_view data);

// Event messages: the first one of a file, and one scalar.
std::string file_version_event(double wall_time);
std::string scalar_event(double wall_time, int64_t step, const std::string& tag, float value);
std::string text_event(double wall_time, int64_t step, const std::string& tag,
                       const std::string& markdown);

class TensorBoardWriter {
 public:
  TensorBoardWriter() = default;
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  // Creates `dir` and dir/events.out.tfevents.<unix seconds>.<host> with its version event.
  void open(const std::string& dir);
  bool is_open() const { return file_ != nullptr; }
  void scalar(const std::string& tag, int64_t step, double value);
  void text(const std::string& tag, int64_t step, const std::string& markdown);
  void flush();  // at each metrics.csv row: TensorBoard reads what is flushed

 private:
  void write(const std::string& event);

  std::FILE* file_ = nullptr;
  std::string path_;
};

}  // namespace sift
