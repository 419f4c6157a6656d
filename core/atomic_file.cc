#include "core/atomic_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace sift {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp") {
  file_ = std::fopen(tmp_.c_str(), "wb");
  if (file_ == nullptr) {
    throw Error(fmt::format("cannot write {}: {}", tmp_, std::strerror(errno)));
  }
}

AtomicFile::~AtomicFile() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::remove(tmp_.c_str());
  }
}

void AtomicFile::write(std::string_view bytes) {
  if (ok_ && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    ok_ = false;
    errno_ = errno;
  }
}

void AtomicFile::commit() {
  if (ok_ && std::fflush(file_) != 0) {
    ok_ = false;
    errno_ = errno;
  }
  const int closed = std::fclose(file_);
  file_ = nullptr;
  if (ok_ && closed != 0) {
    ok_ = false;
    errno_ = errno;
  }
  if (!ok_) {
    std::remove(tmp_.c_str());
    throw Error(fmt::format("cannot write {}: {}", tmp_, std::strerror(errno_)));
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp_.c_str());
    throw Error(fmt::format("cannot rename {} to {}: {}", tmp_, path_, std::strerror(e)));
  }
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  AtomicFile file(path);
  file.write(contents);
  file.commit();
}

void copy_file_atomically(const std::string& from, const std::string& to) {
  std::FILE* in = std::fopen(from.c_str(), "rb");
  if (in == nullptr) throw Error(fmt::format("cannot open {}: {}", from, std::strerror(errno)));
  AtomicFile out(to);
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), in)) > 0) out.write({buffer, n});
  const bool failed = std::ferror(in) != 0;
  std::fclose(in);
  if (failed) throw Error(fmt::format("cannot read {}", from));
  out.commit();
}

}  // namespace sift
