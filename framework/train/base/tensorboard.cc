#include "framework/train/base/tensorboard.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "core/open_for_writing.h"

namespace sift {
namespace {

std::array<uint32_t, 256> crc32c_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;  // reflected
    table[i] = c;
  }
  return table;
}

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

template <typename T>
void put_fixed(std::string& out, T v) {  // little-endian, as protobuf and TFRecord want
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  out.append(bytes, sizeof(T));
}

void put_bytes_field(std::string& out, int field, std::string_view bytes) {
  put_varint(out, static_cast<uint64_t>(field) << 3 | 2);  // wire type 2: length-delimited
  put_varint(out, bytes.size());
  out.append(bytes);
}

void put_wall_time(std::string& out, double wall_time) {
  out.push_back(0x09);  // field 1, wire type 1 (64-bit)
  put_fixed(out, wall_time);
}

// An Event at `step` whose Summary holds one Value message.
std::string summary_event(double wall_time, int64_t step, const std::string& value_msg) {
  std::string summary;
  put_bytes_field(summary, 1, value_msg);
  std::string event;
  put_wall_time(event, wall_time);
  event.push_back(0x10);  // field 2, varint
  put_varint(event, static_cast<uint64_t>(step));
  put_bytes_field(event, 5, summary);
  return event;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = crc32c_table();
  uint32_t c = 0xFFFFFFFFu;
  for (const char b : bytes) c = table[(c ^ static_cast<uint8_t>(b)) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t masked_crc32c(std::string_view bytes) {
  const uint32_t c = crc32c(bytes);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

std::string tf_record(std::string_view data) {
  std::string length;
  put_fixed<uint64_t>(length, data.size());
  std::string record = length;
  put_fixed<uint32_t>(record, masked_crc32c(length));
  record.append(data);
  put_fixed<uint32_t>(record, masked_crc32c(data));
  return record;
}

std::string file_version_event(double wall_time) {
  std::string event;
  put_wall_time(event, wall_time);
  put_bytes_field(event, 3, "brain.Event:2");
  return event;
}

std::string scalar_event(double wall_time, int64_t step, const std::string& tag, float value) {
  std::string value_msg;
  put_bytes_field(value_msg, 1, tag);
  value_msg.push_back(0x15);  // field 2, wire type 5 (32-bit)
  put_fixed(value_msg, value);
  return summary_event(wall_time, step, value_msg);
}

std::string text_event(double wall_time, int64_t step, const std::string& tag,
                       const std::string& markdown) {
  std::string plugin_data, metadata, dim, shape, tensor, value_msg;
  put_bytes_field(plugin_data, 1, "text");
  put_bytes_field(metadata, 1, plugin_data);
  dim.push_back(0x08);  // Dim.size: field 1, varint
  put_varint(dim, 1);
  put_bytes_field(shape, 2, dim);
  tensor.push_back(0x08);  // TensorProto.dtype: field 1, varint
  put_varint(tensor, 7);   // DT_STRING
  put_bytes_field(tensor, 2, shape);
  put_bytes_field(tensor, 8, markdown);
  put_bytes_field(value_msg, 1, tag);
  put_bytes_field(value_msg, 8, tensor);
  put_bytes_field(value_msg, 9, metadata);
  return summary_event(wall_time, step, value_msg);
}

TensorBoardWriter::~TensorBoardWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void TensorBoardWriter::open(const std::string& dir) {
  check_own_folder(dir, "train.tensorboard", /*create=*/true);
  char host[256] = "localhost";
  ::gethostname(host, sizeof(host) - 1);
  const double now = now_seconds();
  path_ = fmt::format("{}/events.out.tfevents.{}.{}", dir, static_cast<int64_t>(now), host);
  file_ = fopen_for_writing(path_, WriteMode::append);
  const std::string record = tf_record(file_version_event(now));
  std::fwrite(record.data(), 1, record.size(), file_);
  flush();
}

void TensorBoardWriter::write(const std::string& event) {
  if (file_ == nullptr) return;
  const std::string record = tf_record(event);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size()) {
    throw Error(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
  }
}

void TensorBoardWriter::scalar(const std::string& tag, int64_t step, double value) {
  if (file_ != nullptr) write(scalar_event(now_seconds(), step, tag, static_cast<float>(value)));
}

void TensorBoardWriter::text(const std::string& tag, int64_t step, const std::string& markdown) {
  if (file_ != nullptr) write(text_event(now_seconds(), step, tag, markdown));
}

void TensorBoardWriter::flush() {
  if (file_ != nullptr && std::fflush(file_) != 0) {
    throw Error(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
  }
}

}  // namespace sift
