// Files written so that a crash never leaves half of one: bytes go to PATH.tmp, which
// is renamed to PATH only when everything was written.
#pragma once

#include <cstdio>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace sift {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // throws sift::Error if PATH.tmp cannot be created
  ~AtomicFile();                          // removes PATH.tmp unless commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::string_view bytes);
  // Flushes, closes and renames; throws sift::Error naming the file on any failure.
  void commit();

 private:
  std::string path_;
  std::string tmp_;
  std::FILE* file_ = nullptr;
  bool ok_ = true;
  int errno_ = 0;
};

void write_file_atomically(const std::string& path, std::string_view contents);

// Writes what `write` puts on the stream through a temporary name: the path versions of
// stream savers (Vocab::save, LabelSet::save) without holding the whole file in memory.
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

// Copies `from` to `to` through a temporary name.
void copy_file_atomically(const std::string& from, const std::string& to);

}  // namespace sift
