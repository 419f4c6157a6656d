// A file of `sift export` read without LibTorch: LibTorch's zip archive (the tensors and
// extra files are stored uncompressed) and the module's tensors as its data.pkl names
// them. What this reader does not know (a compressed entry, a pickle opcode LibTorch's
// module writer does not use for plain tensor attributes) is a sift::Error; sift-lite
// then hands the file to sift-main, which reads it with LibTorch.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sift {

// A tensor attribute of the module: its storage ("data/KEY"), element type (the storage
// class: Float, Byte, Char, Int, Long, BFloat16), offset, shape and strides in elements.
struct ArchiveTensor {
  std::string storage;
  std::string type;
  int64_t offset = 0;
  std::vector<int64_t> shape, stride;
  int64_t numel() const;
  bool contiguous() const;
};

class ExportArchive {
 public:
  // Reads the zip's central directory; sift::Error naming `path` when it is not a zip.
  explicit ExportArchive(const std::string& path);

  // Whether the archive holds `name` (a path below its top folder: "extra/vocab.txt").
  bool has(const std::string& name) const;
  // Its bytes; sift::Error when absent or compressed.
  std::string read(const std::string& name) const;
  // The module's tensor attributes (data.pkl), by name.
  std::map<std::string, ArchiveTensor> tensors() const;
  // A contiguous tensor's values into `out` (numel x `element` bytes: its type's size).
  void read_tensor(const ArchiveTensor& t, void* out, size_t element) const;

 private:
  struct Entry {
    uint64_t local_header = 0, size = 0;
    bool stored = false;
  };
  const Entry& entry(const std::string& name) const;
  // `n` bytes from `begin` into `out`; sift::Error when absent, compressed or shorter.
  void read_into(const std::string& name, uint64_t begin, uint64_t n, char* out) const;

  std::string path_;
  std::map<std::string, Entry> entries_;
  mutable std::ifstream file_;
};

}  // namespace sift
