// Reading checkpoint files byte by byte from a CLI test, which does not link LibTorch.
// Layout (framework/runtime/checkpoint.cc): magic (8 bytes), u32 version, u64 length,
// u32 CRC-32 of everything after these 24 bytes; meta as u64 size + JSON; u32 section
// count; each section as u64 size + name, u64 size + bytes. A "model" section is
// tensors_bytes' layout, whose last bytes are the last tensor's raw values.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "core/crc32.h"
#include "tests/test_files.h"

namespace sift::testing {

template <class T>
T take(const std::string& bytes, size_t& at) {
  T value{};
  if (at + sizeof(T) > bytes.size()) throw std::runtime_error("truncated checkpoint");
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  at += sizeof(T);
  return value;
}

inline std::string take_bytes(const std::string& bytes, size_t& at) {
  const auto size = static_cast<size_t>(take<uint64_t>(bytes, at));
  if (at + size > bytes.size()) throw std::runtime_error("truncated checkpoint");
  std::string out = bytes.substr(at, size);
  at += size;
  return out;
}

// Drops every "seconds" key (wall times) from a JSON value.
inline nlohmann::json without_seconds(nlohmann::json j) {
  if (j.is_object()) {
    j.erase("seconds");
    for (auto& [key, value] : j.items()) value = without_seconds(value);
  } else if (j.is_array()) {
    for (auto& value : j) value = without_seconds(value);
  }
  return j;
}

// The checkpoint's metadata (its JSON).
inline nlohmann::json checkpoint_meta_of(const std::string& path) {
  size_t at = 24;
  return nlohmann::json::parse(take_bytes(slurp(path), at));
}

// The checkpoint's bytes less what differs between two runs of one binary: its metadata
// without "seconds", then each section but "optimizer" (LibTorch's archive names each
// parameter by its heap address) as name, newline, bytes.
inline std::string checkpoint_view(const std::string& path) {
  const std::string bytes = slurp(path);
  size_t at = 24;
  std::string view = without_seconds(nlohmann::json::parse(take_bytes(bytes, at))).dump() + "\n";
  const auto sections = take<uint32_t>(bytes, at);
  for (uint32_t i = 0; i < sections; ++i) {
    const std::string name = take_bytes(bytes, at);
    const std::string section = take_bytes(bytes, at);
    if (name != "optimizer") view += name + "\n" + section;
  }
  return view;
}

// One section's bytes ("" when the file has none by that name).
inline std::string checkpoint_section(const std::string& path, const std::string& wanted) {
  const std::string bytes = slurp(path);
  size_t at = 24;
  take_bytes(bytes, at);  // meta
  const auto sections = take<uint32_t>(bytes, at);
  for (uint32_t i = 0; i < sections; ++i) {
    const std::string name = take_bytes(bytes, at);
    std::string section = take_bytes(bytes, at);
    if (name == wanted) return section;
  }
  return "";
}

// Writes a NaN over the last float of the checkpoint's "model" section and a CRC that
// matches again: a well-formed file holding the weights of a diverged run. Returns
// false when the file has no "model" section (best.ckpt naming last.ckpt's weights).
inline bool poison_model_weights(const std::string& path) {
  std::string bytes = slurp(path);
  size_t at = 24;
  take_bytes(bytes, at);  // meta
  const auto sections = take<uint32_t>(bytes, at);
  for (uint32_t i = 0; i < sections; ++i) {
    const std::string name = take_bytes(bytes, at);
    const auto size = static_cast<size_t>(take<uint64_t>(bytes, at));
    at += size;
    if (name != "model") continue;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(&bytes[at - sizeof(float)], &nan, sizeof(float));
    const uint32_t crc = crc32_of(std::string_view(bytes).substr(24));
    std::memcpy(&bytes[20], &crc, sizeof(crc));
    write_file(path, bytes);
    return true;
  }
  return false;
}

}  // namespace sift::testing
