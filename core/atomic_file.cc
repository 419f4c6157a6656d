#include "core/atomic_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <streambuf>
#include <vector>

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

namespace {

// A stream buffer that hands whatever the stream writes on to an AtomicFile, 64 KiB at a time.
class AtomicFileBuf : public std::streambuf {
 public:
  explicit AtomicFileBuf(AtomicFile& file) : file_(file), buffer_(1 << 16) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }

 protected:
  int_type overflow(int_type c) override {
    sync();
    if (!traits_type::eq_int_type(c, traits_type::eof())) sputc(traits_type::to_char_type(c));
    return traits_type::not_eof(c);
  }
  int sync() override {
    file_.write({pbase(), static_cast<size_t>(pptr() - pbase())});
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return 0;
  }

 private:
  AtomicFile& file_;
  std::vector<char> buffer_;
};

}  // namespace

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  AtomicFile file(path);
  AtomicFileBuf buf(file);
  std::ostream out(&buf);
  write(out);
  out.flush();
  if (!out) throw Error(fmt::format("cannot write {}", path));
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
