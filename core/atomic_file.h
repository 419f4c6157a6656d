// Files written so that a crash never leaves half of one: bytes go to a new file
// PATH.tmp-XXXXXX (unique name, O_EXCL|O_NOFOLLOW: a planted symlink is never followed), which
// is renamed to PATH only when everything was written. Durable too: PATH.tmp is
// fsync'ed before the rename and PATH's folder after it (and after PATH.tmp is created),
// so a power cut leaves either the old PATH or the complete new one, never an empty or
// partly written file under PATH (ext4's delayed allocation can otherwise do exactly that).
#pragma once

#include <cstdio>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace sift {

class AtomicFile {
 public:
  explicit AtomicFile(
      std::string path);  // throws sift::Error if the temporary file cannot be created
  ~AtomicFile();          // removes the temporary file unless commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::string_view bytes);
  // Writes `bytes` over the file's first bytes (a header whose fields are known only once
  // the rest is written: a checkpoint's CRC); later writes go on at the end.
  void rewrite_start(std::string_view bytes);
  // Flushes, fsyncs, closes and renames, then fsyncs the folder; throws sift::Error
  // naming the file on any failure.
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

// Makes `to` a second name of `from`'s bytes (a hard link through a temporary name, then a
// rename), or a copy where the file system has no hard links. `to` then holds the bytes
// on its own: deleting or replacing `from` (a rename over it) leaves them.
void link_file_atomically(const std::string& from, const std::string& to);

}  // namespace sift
