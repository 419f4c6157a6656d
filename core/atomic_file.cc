#include "core/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <streambuf>
#include <vector>

#include "core/error.h"

namespace sift {
namespace {

// The folder that holds `path` ("." for a bare name).
std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// fsync(2) of an open file or folder. Returns 0 or an errno; what cannot be synced (a pipe,
// a special file, a file system that cannot sync folders: EINVAL, EROFS) counts as done.
int sync_fd(int fd) {
  while (::fsync(fd) != 0) {
    if (errno == EINTR) continue;
    return errno == EINVAL || errno == EROFS ? 0 : errno;
  }
  return 0;
}

// The folder's fsync, so that the names created or renamed in it survive a power cut.
int sync_folder(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int result = sync_fd(fd);
  ::close(fd);
  return result;
}

// Renames `tmp` to `path` (removing `tmp` when that fails), then syncs the folder: the
// rename itself is durable, where without it a power cut can bring back the old name.
void rename_durably(const std::string& tmp, const std::string& path) {
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw Error(fmt::format("cannot rename {} to {}: {}", tmp, path, std::strerror(e)));
  }
  if (const int e = sync_folder(folder_of(path)); e != 0) {
    throw Error(fmt::format("cannot sync the folder of {}: {}", path, std::strerror(e)));
  }
}

// A new file PATH.tmp-XXXXXX with a unique name, made with O_CREAT|O_EXCL|O_NOFOLLOW
// (mkostemp): a symlink planted at any name is never followed, and two writers of the
// same PATH never share a temporary file.
std::FILE* create_temp(const std::string& path, std::string& tmp) {
  std::string name = path + ".tmp-XXXXXX";
  const int fd = ::mkostemp(name.data(), O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) throw Error(fmt::format("cannot write {}: {}", name, std::strerror(errno)));
  tmp = name;
  // mkostemp makes the file 0600: give it the mode fopen would (0666 less the umask).
  static const mode_t mask = [] {
    const mode_t m = ::umask(022);
    ::umask(m);
    return m;
  }();
  ::fchmod(fd, 0666 & ~mask);
  std::FILE* file = ::fdopen(fd, "wb");
  if (file == nullptr) {
    const int e = errno;
    ::close(fd);
    std::remove(tmp.c_str());
    throw Error(fmt::format("cannot write {}: {}", tmp, std::strerror(e)));
  }
  return file;
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  file_ = create_temp(path_, tmp_);
  // The new name in the folder, durable before the rename relies on it.
  if (const int e = sync_folder(folder_of(tmp_)); e != 0) {
    std::fclose(file_);
    file_ = nullptr;
    std::remove(tmp_.c_str());
    throw Error(fmt::format("cannot sync the folder of {}: {}", tmp_, std::strerror(e)));
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

void AtomicFile::rewrite_start(std::string_view bytes) {
  if (ok_ && (std::fseek(file_, 0, SEEK_SET) != 0 ||
              std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size() ||
              std::fseek(file_, 0, SEEK_END) != 0)) {
    ok_ = false;
    errno_ = errno;
  }
}

void AtomicFile::commit() {
  if (ok_ && std::fflush(file_) != 0) {
    ok_ = false;
    errno_ = errno;
  }
  // The bytes on disk before the name points at them.
  if (ok_) {
    if (const int e = sync_fd(::fileno(file_)); e != 0) {
      ok_ = false;
      errno_ = e;
    }
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
  rename_durably(tmp_, path_);
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

void link_file_atomically(const std::string& from, const std::string& to) {
  // A unique free name: mkostemp's file is removed, and link() refuses a name that
  // another writer took since (EEXIST), so nothing is ever followed or overwritten.
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string tmp = to + ".tmp-XXXXXX";
    const int fd = ::mkostemp(tmp.data(), O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) throw Error(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
    ::close(fd);
    ::unlink(tmp.c_str());
    if (::link(from.c_str(), tmp.c_str()) != 0) {
      if (errno == EEXIST) continue;
      if (errno == ENOENT)
        throw Error(fmt::format("cannot open {}: {}", from, std::strerror(errno)));
      return copy_file_atomically(from, to);  // EPERM, ENOTSUP: no hard links here
    }
    return rename_durably(tmp, to);
  }
  throw Error(fmt::format("cannot find a free temporary name beside {}", to));
}

}  // namespace sift
