#include "datasets/line_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace sift {
namespace {

constexpr size_t kBlockBytes = 256 * 1024;

// read(2) that retries on EINTR and fills as much of buf as the file allows.
size_t read_fd(int fd, char* buf, size_t cap, const std::string& path) {
  size_t got = 0;
  while (got < cap) {
    ssize_t n = ::read(fd, buf + got, cap - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return got;
}

[[noreturn]] void throw_corrupt(const std::string& path, const char* kind, uint64_t line) {
  throw Error(fmt::format("{}: corrupt or truncated {} data after line {}", path, kind, line));
}

}  // namespace

// Produces the file's text bytes; read() returns 0 at the end and throws on bad data.
class LineReader::Decoder {
 public:
  Decoder(int fd, const std::string& path, std::vector<char> first, size_t first_size)
      : fd_(fd), path_(path), in_(std::move(first)), in_size_(first_size) {}
  virtual ~Decoder() = default;
  virtual size_t read(char* out, size_t cap, uint64_t line) = 0;
  // Moves to decoded offset `to` from `from`; false when the decoder cannot seek.
  virtual bool seek(uint64_t /*from*/, uint64_t /*to*/) { return false; }

 protected:
  // Refills in_ from the file once all of it was consumed; false at end of file.
  bool fill_input() {
    in_size_ = read_fd(fd_, in_.data(), in_.size(), path_);
    in_eof_ = in_size_ == 0;
    return !in_eof_;
  }

  int fd_;
  const std::string& path_;
  std::vector<char> in_;  // compressed bytes (or the first plain block)
  size_t in_size_;
  bool in_eof_ = false;
};

namespace {

class PlainDecoder : public LineReader::Decoder {
 public:
  using Decoder::Decoder;
  size_t read(char* out, size_t cap, uint64_t) override {
    if (in_pos_ < in_size_) {  // the block read to sniff the format
      size_t n = std::min(cap, in_size_ - in_pos_);
      std::memcpy(out, in_.data() + in_pos_, n);
      in_pos_ += n;
      return n;
    }
    return read_fd(fd_, out, cap, path_);
  }

  bool seek(uint64_t, uint64_t to) override {
    if (::lseek(fd_, static_cast<off_t>(to), SEEK_SET) < 0) {
      throw Error(fmt::format("cannot seek in {}: {}", path_, std::strerror(errno)));
    }
    in_pos_ = in_size_;  // the sniffed block is behind us now
    return true;
  }

 private:
  size_t in_pos_ = 0;
};

class GzipDecoder : public LineReader::Decoder {
 public:
  GzipDecoder(int fd, const std::string& path, std::vector<char> first, size_t first_size)
      : Decoder(fd, path, std::move(first), first_size) {
    if (inflateInit2(&z_, 15 + 16) != Z_OK)  // 15 + 16: gzip wrapper, largest window
      throw Error(fmt::format("cannot open {}: zlib initialisation failed", path));
    z_.next_in = reinterpret_cast<Bytef*>(in_.data());
    z_.avail_in = static_cast<uInt>(in_size_);
  }
  ~GzipDecoder() override { inflateEnd(&z_); }

  size_t read(char* out, size_t cap, uint64_t line) override {
    for (;;) {
      if (z_.avail_in == 0 && !in_eof_ && fill_input()) {
        z_.next_in = reinterpret_cast<Bytef*>(in_.data());
        z_.avail_in = static_cast<uInt>(in_size_);
      }
      if (z_.avail_in == 0 && in_eof_ && !member_open_) return 0;
      z_.next_out = reinterpret_cast<Bytef*>(out);
      z_.avail_out = static_cast<uInt>(cap);
      int ret = inflate(&z_, Z_NO_FLUSH);
      size_t produced = cap - z_.avail_out;
      if (ret == Z_STREAM_END) {  // end of one member; another may follow
        inflateReset(&z_);
        member_open_ = false;
      } else if (ret == Z_OK) {
        member_open_ = true;
      } else if (ret != Z_BUF_ERROR || (in_eof_ && z_.avail_in == 0 && produced == 0)) {
        throw_corrupt(path_, "gzip", line);  // bad data, or the file ends inside a member
      }
      if (produced > 0) return produced;
    }
  }

 private:
  z_stream z_{};
  bool member_open_ = true;  // the file starts with a member (its magic bytes were seen)
};

class ZstdDecoder : public LineReader::Decoder {
 public:
  ZstdDecoder(int fd, const std::string& path, std::vector<char> first, size_t first_size)
      : Decoder(fd, path, std::move(first), first_size), dctx_(ZSTD_createDCtx()) {
    if (dctx_ == nullptr)
      throw Error(fmt::format("cannot open {}: zstd initialisation failed", path));
    zin_ = {in_.data(), in_size_, 0};
  }
  ~ZstdDecoder() override { ZSTD_freeDCtx(dctx_); }

  size_t read(char* out, size_t cap, uint64_t line) override {
    for (;;) {
      if (zin_.pos == zin_.size && !in_eof_ && fill_input()) zin_ = {in_.data(), in_size_, 0};
      bool input_done = zin_.pos == zin_.size && in_eof_;
      if (input_done && frame_done_) return 0;
      ZSTD_outBuffer zout{out, cap, 0};
      size_t ret = ZSTD_decompressStream(dctx_, &zout, &zin_);
      if (ZSTD_isError(ret)) throw_corrupt(path_, "zstd", line);
      frame_done_ = ret == 0;  // 0: a frame ended and all of it was returned
      if (zout.pos > 0) return zout.pos;
      if (input_done && !frame_done_)
        throw_corrupt(path_, "zstd", line);  // the file ends inside a frame
    }
  }

 private:
  ZSTD_DCtx* dctx_;
  ZSTD_inBuffer zin_{};
  bool frame_done_ = false;  // the file starts with a frame (its magic bytes were seen)
};

}  // namespace

LineReader::LineReader(std::string path, uint64_t max_line_bytes)
    : path_(std::move(path)), max_line_bytes_(max_line_bytes), block_(kBlockBytes) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(fmt::format("cannot open {}: {}", path_, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd_);
    throw Error(fmt::format("cannot open {}: {}", path_, std::strerror(EISDIR)));
  }
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::vector<char> first(kBlockBytes);
  size_t n;
  try {
    n = read_fd(fd_, first.data(), first.size(), path_);
  } catch (...) {
    ::close(fd_);
    throw;
  }
  const auto* m = reinterpret_cast<const unsigned char*>(first.data());
  const bool gz = n >= 2 && m[0] == 0x1f && m[1] == 0x8b;
  const bool zst = n >= 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd;
  check_magic(gz, zst, n);
  if (gz) {
    decoder_ = std::make_unique<GzipDecoder>(fd_, path_, std::move(first), n);
  } else if (zst) {
    decoder_ = std::make_unique<ZstdDecoder>(fd_, path_, std::move(first), n);
  } else {
    decoder_ = std::make_unique<PlainDecoder>(fd_, path_, std::move(first), n);
  }
}

// A .gz or .zst name on a file without that format's magic bytes is refused: read as
// plain text, a damaged compressed file became lines of binary noise.
void LineReader::check_magic(bool gz, bool zst, size_t n) {
  auto ends_with = [&](const char* ext) {
    const std::string e(ext);
    return path_.size() >= e.size() && path_.compare(path_.size() - e.size(), e.size(), e) == 0;
  };
  const char* kind = ends_with(".gz") && !gz     ? "gzip"
                     : ends_with(".zst") && !zst ? "zstd"
                                                 : nullptr;
  if (kind == nullptr || n == 0) return;  // an empty file reads as no lines whatever its name
  ::close(fd_);
  fd_ = -1;
  throw Error(
      fmt::format("{}: the name says {} but the file does not start with {}'s magic "
                  "bytes (damaged, or not compressed: rename it)",
                  path_, kind, kind));
}

LineReader::~LineReader() {
  decoder_.reset();
  if (fd_ >= 0) ::close(fd_);
}

bool LineReader::refill() {
  if (eof_) return false;
  block_start_ += end_;
  end_ = decoder_->read(block_.data(), block_.size(), line_number_);
  pos_ = 0;
  eof_ = end_ == 0;
  return !eof_;
}

// Appends up to max_line_bytes + 1 bytes (one more, to see a '\r' before "\n").
void LineReader::take(std::string& line, const char* begin, size_t n) {
  if (n == 0) return;
  uint64_t room = max_line_bytes_ + 1 > line.size() ? max_line_bytes_ + 1 - line.size() : 0;
  line.append(begin, static_cast<size_t>(std::min<uint64_t>(n, room)));
  raw_length_ += n;
  last_byte_ = begin[n - 1];
}

void LineReader::skip_to(uint64_t target) {
  const uint64_t here = offset();
  if (target < here) {
    throw Error(fmt::format("{}: cannot move back from byte {} to {}", path_, here, target));
  }
  if (target == here) return;
  lines_known_ = false;
  if (target <= block_start_ + end_) {  // inside the current block
    pos_ = static_cast<size_t>(target - block_start_);
    return;
  }
  if (decoder_->seek(here, target)) {
    block_start_ = target;
    pos_ = end_ = 0;
    eof_ = false;
    return;
  }
  while (block_start_ + end_ < target && refill()) {
  }
  pos_ = static_cast<size_t>(std::min<uint64_t>(target - block_start_, end_));
}

uint64_t LineReader::count_lines(const std::string& path, uint64_t offset) {
  LineReader reader(path, 1);  // lines are only counted: keep none of their bytes
  std::string ignored;
  uint64_t lines = 0;
  while (reader.offset() < offset && reader.next(ignored)) {
    if (reader.offset() <= offset) ++lines;
  }
  return lines;
}

bool LineReader::next(std::string& line) {
  line.clear();
  raw_length_ = 0;
  last_byte_ = 0;
  bool newline = false;
  while (!newline) {
    if (pos_ == end_ && !refill()) {
      if (raw_length_ == 0) return false;
      break;
    }
    const char* begin = block_.data() + pos_;
    size_t avail = end_ - pos_;
    const auto* nl = static_cast<const char*>(std::memchr(begin, '\n', avail));
    size_t n = nl != nullptr ? static_cast<size_t>(nl - begin) : avail;
    take(line, begin, n);
    pos_ += nl != nullptr ? n + 1 : n;
    newline = nl != nullptr;
  }
  ++line_number_;
  uint64_t content = raw_length_ - (last_byte_ == '\r' ? 1 : 0);
  too_long_ = content > max_line_bytes_;
  line.resize(static_cast<size_t>(std::min<uint64_t>(content, max_line_bytes_)));
  return true;
}

}  // namespace sift
