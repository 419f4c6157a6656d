// safetensors files (Hugging Face's weight format), torch-free: an 8-byte little-endian
// header length N, N bytes of JSON naming each tensor's dtype, shape and
// [begin, end) byte offsets into the data that follows, then the data. The reader maps
// the file and checks the header as the format's own validator does before any tensor
// is read; each violation is one sift::Error naming the file and the tensor.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sift {

// The dtypes a classifier's weights come in. Integer and float64 tensors are refused
// naming the tensor (no BERT-family checkpoint stores its weights in them).
enum class SafeDtype : uint8_t { f32, f16, bf16 };

const char* safe_dtype_name(SafeDtype dtype);  // "F32", "F16", "BF16"
size_t safe_dtype_bytes(SafeDtype dtype);

struct SafeTensorInfo {
  std::string name;
  SafeDtype dtype = SafeDtype::f32;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // byte offsets into the data section
  uint64_t end = 0;
  int64_t numel() const;
};

struct SafetensorsHeader {
  std::vector<SafeTensorInfo> tensors;          // in the order of their offsets
  std::map<std::string, std::string> metadata;  // "__metadata__", string values only
  uint64_t data_offset = 0;                     // 8 + N: where the data section starts
};

// The format's limit on the header (the reference reader's): a larger one is refused
// before it is read, so a hostile length cannot make the reader allocate it.
constexpr uint64_t kMaxSafetensorsHeaderBytes = 100u << 20;

// Parses and checks the header of a whole file's bytes; `where` names the file in
// errors. Checks: the length field and the declared header fit the file; the header is a
// JSON object of objects; each tensor has a known dtype, a shape of non-negative
// integers and two data_offsets; no name twice; offsets in the data section, in order,
// without overlap or gap, the last one ending at the file's end; shape times dtype size
// equal to the tensor's bytes.
SafetensorsHeader parse_safetensors_header(std::string_view file, const std::string& where);

// A mapped, checked safetensors file. Tensors are read as float32, converted from F16
// and BF16 exactly.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);  // throws sift::Error
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const SafetensorsHeader& header() const { return header_; }
  // The tensor called `name`, or nullptr.
  const SafeTensorInfo* find(const std::string& name) const;
  // The tensor's values as float32 in row-major order.
  std::vector<float> floats(const SafeTensorInfo& tensor) const;

 private:
  std::string path_;
  const char* bytes_ = nullptr;
  size_t size_ = 0;
  SafetensorsHeader header_;
};

// One tensor to write: its raw little-endian bytes in `dtype`.
struct SafeTensorData {
  std::string name;
  SafeDtype dtype = SafeDtype::f32;
  std::vector<int64_t> shape;
  std::string bytes;
};

// float32 values as the raw bytes of `dtype` (F16 and BF16 rounded to nearest even).
std::string safe_tensor_bytes(const std::vector<float>& values, SafeDtype dtype);

// The bytes of a safetensors file holding `tensors` (in this order) and `metadata`; the
// header is padded with spaces to a multiple of 8 bytes, as the reference writer does.
std::string safetensors_bytes(const std::vector<SafeTensorData>& tensors,
                              const std::map<std::string, std::string>& metadata = {});

// Writes safetensors_bytes to `path` through a temporary name.
void write_safetensors(const std::string& path, const std::vector<SafeTensorData>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace sift
