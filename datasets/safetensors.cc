#include "datasets/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "core/atomic_file.h"
#include "core/error.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; this reader copies it as it is");

namespace sift {

using nlohmann::json;

const char* safe_dtype_name(SafeDtype dtype) {
  switch (dtype) {
    case SafeDtype::f32:
      return "F32";
    case SafeDtype::f16:
      return "F16";
    case SafeDtype::bf16:
      return "BF16";
  }
  return "?";
}

size_t safe_dtype_bytes(SafeDtype dtype) { return dtype == SafeDtype::f32 ? 4 : 2; }

int64_t SafeTensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {

[[noreturn]] void header_error(const std::string& where, const std::string& what) {
  throw Error("safetensors file " + where + ": " + what);
}

[[noreturn]] void tensor_error(const std::string& where, const std::string& name,
                               const std::string& what) {
  header_error(where, "tensor '" + name + "': " + what);
}

SafeDtype dtype_of(const json& entry, const std::string& where, const std::string& name) {
  const auto it = entry.find("dtype");
  if (it == entry.end() || !it->is_string()) tensor_error(where, name, "no \"dtype\" string");
  const std::string dtype = it->get<std::string>();
  for (SafeDtype d : {SafeDtype::f32, SafeDtype::f16, SafeDtype::bf16}) {
    if (dtype == safe_dtype_name(d)) return d;
  }
  tensor_error(where, name, "dtype " + dtype + " is not one of F32, F16, BF16");
}

std::vector<uint64_t> unsigned_list(const json& entry, const char* key, const std::string& where,
                                    const std::string& name) {
  const auto it = entry.find(key);
  if (it == entry.end() || !it->is_array()) {
    tensor_error(where, name, std::string("no \"") + key + "\" list");
  }
  std::vector<uint64_t> values;
  for (const json& v : *it) {
    if (!v.is_number_unsigned()) {
      tensor_error(
          where, name,
          std::string("\"") + key + "\" holds " + v.dump() + ", not a non-negative integer");
    }
    values.push_back(v.get<uint64_t>());
  }
  return values;
}

// Bytes the shape needs in `dtype`, or refuses a product past 2^62.
uint64_t shape_bytes(const SafeTensorInfo& t, const std::string& where) {
  uint64_t bytes = safe_dtype_bytes(t.dtype);
  for (int64_t d : t.shape) {
    if (d != 0 && bytes > (uint64_t{1} << 62) / static_cast<uint64_t>(d)) {
      tensor_error(where, t.name, "shape is too large");
    }
    bytes *= static_cast<uint64_t>(d);
  }
  return bytes;
}

SafeTensorInfo tensor_of(const std::string& name, const json& entry, const std::string& where) {
  if (!entry.is_object()) tensor_error(where, name, "its entry is not a JSON object");
  SafeTensorInfo t;
  t.name = name;
  t.dtype = dtype_of(entry, where, name);
  for (uint64_t d : unsigned_list(entry, "shape", where, name)) {
    if (d > (uint64_t{1} << 62)) tensor_error(where, name, "shape is too large");
    t.shape.push_back(static_cast<int64_t>(d));
  }
  const auto offsets = unsigned_list(entry, "data_offsets", where, name);
  if (offsets.size() != 2) tensor_error(where, name, "\"data_offsets\" must hold two numbers");
  t.begin = offsets[0];
  t.end = offsets[1];
  if (t.end < t.begin) tensor_error(where, name, "data_offsets end before they begin");
  const uint64_t want = shape_bytes(t, where);
  if (want != t.end - t.begin) {
    tensor_error(where, name,
                 "shape " + json(t.shape).dump() + " of " + safe_dtype_name(t.dtype) + " needs " +
                     std::to_string(want) + " bytes, data_offsets give " +
                     std::to_string(t.end - t.begin));
  }
  return t;
}

// The header's JSON; a name given twice is refused (a JSON object keeps only the last).
json parse_header_json(std::string_view text, const std::string& where) {
  std::set<std::string> seen;
  std::string twice;
  const json::parser_callback_t note_names = [&](int depth, json::parse_event_t event,
                                                 json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 && twice.empty() &&
        !seen.insert(parsed.get<std::string>()).second) {
      twice = parsed.get<std::string>();
    }
    return true;
  };
  json header;
  try {
    header = json::parse(text.begin(), text.end(), note_names);
  } catch (const json::exception& e) {
    header_error(where, std::string("the header is not valid JSON: ") + e.what());
  }
  if (!twice.empty()) tensor_error(where, twice, "named twice in the header");
  if (!header.is_object()) header_error(where, "the header is not a JSON object");
  return header;
}

std::map<std::string, std::string> metadata_of(const json& entry, const std::string& where) {
  if (!entry.is_object()) header_error(where, "\"__metadata__\" is not a JSON object");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : entry.items()) {
    if (!value.is_string())
      header_error(where, "\"__metadata__\" key '" + key + "' is not a string");
    metadata[key] = value.get<std::string>();
  }
  return metadata;
}

// Offsets in order, each tensor starting where the one before ended, the last one
// ending at the end of the data section (no byte unaccounted for).
void check_layout(std::vector<SafeTensorInfo>& tensors, uint64_t data_bytes,
                  const std::string& where) {
  std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t at = 0;
  for (const SafeTensorInfo& t : tensors) {
    if (t.begin < at) tensor_error(where, t.name, "its data overlaps the tensor before it");
    if (t.begin > at) {
      tensor_error(where, t.name,
                   "a gap of " + std::to_string(t.begin - at) + " bytes lies before its data");
    }
    if (t.end > data_bytes) {
      tensor_error(where, t.name,
                   "data_offsets end at " + std::to_string(t.end) + ", past the data section's " +
                       std::to_string(data_bytes) + " bytes");
    }
    at = t.end;
  }
  if (at != data_bytes) {
    header_error(where, "the data section holds " + std::to_string(data_bytes) +
                            " bytes, its tensors account for " + std::to_string(at));
  }
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1F;
  const uint32_t mantissa = h & 0x3FF;
  if (exponent == 0) {
    const float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -v : v;
  }
  const uint32_t bits = exponent == 31 ? sign | 0x7F800000u | (mantissa << 13)
                                       : sign | ((exponent + 112) << 23) | (mantissa << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Shifts m right by `shift` bits, rounding to nearest, ties to even.
uint32_t shift_round_even(uint32_t m, uint32_t shift) {
  const uint32_t r = m >> shift;
  const uint32_t rest = m & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return r + ((rest > half || (rest == half && (r & 1))) ? 1 : 0);
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t abs = x & 0x7FFFFFFF;
  if (abs >= 0x7F800000) return sign | (abs > 0x7F800000 ? 0x7E00 : 0x7C00);
  if (abs >= 0x477FF000) return sign | 0x7C00;  // 65520 and above round to infinity
  if (abs < 0x33000000) return sign;            // below half the smallest subnormal
  const uint32_t e = abs >> 23;
  const uint32_t m = (abs & 0x7FFFFF) | 0x800000;
  if (e < 113) return sign | static_cast<uint16_t>(shift_round_even(m, 126 - e));
  return sign | static_cast<uint16_t>(((e - 112) << 10) + shift_round_even(m & 0x7FFFFF, 13));
}

uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7FFFFFFF) > 0x7F800000) return static_cast<uint16_t>((x >> 16) | 0x40);  // NaN
  return static_cast<uint16_t>((x + 0x7FFF + ((x >> 16) & 1)) >> 16);
}

}  // namespace

SafetensorsHeader parse_safetensors_header(std::string_view file, const std::string& where) {
  if (file.size() < 8) header_error(where, "shorter than its 8-byte header length");
  uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);
  if (n > kMaxSafetensorsHeaderBytes) {
    header_error(where, "declares a header of " + std::to_string(n) + " bytes, over the " +
                            std::to_string(kMaxSafetensorsHeaderBytes) + "-byte limit");
  }
  if (n > file.size() - 8) {
    header_error(where, "declares a header of " + std::to_string(n) + " bytes, the file has " +
                            std::to_string(file.size() - 8) + " after the length");
  }
  const std::string_view text = file.substr(8, n);
  if (text.empty() || text[0] != '{') header_error(where, "the header does not start with '{'");
  const json header = parse_header_json(text, where);
  SafetensorsHeader out;
  out.data_offset = 8 + n;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      out.metadata = metadata_of(entry, where);
    } else {
      out.tensors.push_back(tensor_of(name, entry, where));
    }
  }
  check_layout(out.tensors, file.size() - out.data_offset, where);
  return out;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open safetensors file " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error("safetensors file " + path + " is not a regular file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* map = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      ::close(fd);
      throw Error("cannot map safetensors file " + path + ": " + std::strerror(errno));
    }
    bytes_ = static_cast<const char*>(map);
  }
  ::close(fd);
  try {
    header_ = parse_safetensors_header(std::string_view(bytes_, size_), path);
  } catch (...) {
    if (bytes_ != nullptr) ::munmap(const_cast<char*>(bytes_), size_);
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (bytes_ != nullptr) ::munmap(const_cast<char*>(bytes_), size_);
}

const SafeTensorInfo* SafetensorsFile::find(const std::string& name) const {
  for (const SafeTensorInfo& t : header_.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::vector<float> SafetensorsFile::floats(const SafeTensorInfo& tensor) const {
  const char* data = bytes_ + header_.data_offset + tensor.begin;
  std::vector<float> values(static_cast<size_t>(tensor.numel()));
  if (tensor.dtype == SafeDtype::f32) {
    if (!values.empty()) std::memcpy(values.data(), data, values.size() * 4);
    return values;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t h;
    std::memcpy(&h, data + 2 * i, 2);
    if (tensor.dtype == SafeDtype::f16) {
      values[i] = half_to_float(h);
    } else {
      const uint32_t bits = static_cast<uint32_t>(h) << 16;
      std::memcpy(&values[i], &bits, 4);
    }
  }
  return values;
}

std::string safe_tensor_bytes(const std::vector<float>& values, SafeDtype dtype) {
  std::string bytes(values.size() * safe_dtype_bytes(dtype), '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == SafeDtype::f32) {
      std::memcpy(&bytes[4 * i], &values[i], 4);
    } else {
      const uint16_t h =
          dtype == SafeDtype::f16 ? float_to_half(values[i]) : float_to_bf16(values[i]);
      std::memcpy(&bytes[2 * i], &h, 2);
    }
  }
  return bytes;
}

std::string safetensors_bytes(const std::vector<SafeTensorData>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t at = 0;
  for (const SafeTensorData& t : tensors) {
    header[t.name] = {{"dtype", safe_dtype_name(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {at, at + t.bytes.size()}}};
    at += t.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t n = text.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  out += text;
  for (const SafeTensorData& t : tensors) out += t.bytes;
  return out;
}

void write_safetensors(const std::string& path, const std::vector<SafeTensorData>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  write_file_atomically(path, safetensors_bytes(tensors, metadata));
}

}  // namespace sift
