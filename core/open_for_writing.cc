#include "core/open_for_writing.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace sift {
namespace {

// O_NONBLOCK so that a FIFO planted at the name fails (ENXIO) or opens at once instead of
// waiting for a reader; it is cleared again below for the plain file this must be.
constexpr int kFlags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw Error(fmt::format("cannot write {}: {}", path, why));
}

}  // namespace

int open_for_writing(const std::string& path, WriteMode mode) {
  // O_TRUNC only after the checks: truncating at open would empty a hard-linked file.
  const int fd = ::open(path.c_str(), kFlags | (mode == WriteMode::append ? O_APPEND : 0), 0644);
  if (fd < 0) {
    const int e = errno;
    struct stat st {};
    if (e == ELOOP || (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))) {
      refuse(path, "it is a symlink, which is never followed (remove it)");
    }
    refuse(path, std::strerror(e));
  }
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) {
    why = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = "it is not a plain file (remove it)";
  } else if (st.st_nlink > 1) {
    why = fmt::format("it has {} hard links, so writing it changes another file (remove it)",
                      st.st_nlink);
  } else if (::fcntl(fd, F_SETFL, mode == WriteMode::append ? O_APPEND : 0) != 0 ||
             (mode == WriteMode::truncate && ::ftruncate(fd, 0) != 0)) {
    why = std::strerror(errno);
  }
  if (!why.empty()) {
    ::close(fd);
    refuse(path, why);
  }
  return fd;
}

std::FILE* fopen_for_writing(const std::string& path, WriteMode mode) {
  const int fd = open_for_writing(path, mode);
  std::FILE* file = ::fdopen(fd, mode == WriteMode::append ? "a" : "w");
  if (file == nullptr) {
    const int e = errno;
    ::close(fd);
    refuse(path, std::strerror(e));
  }
  return file;
}

void check_own_folder(const std::string& dir, const std::string& key, bool create) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    throw Error(fmt::format(
        "{}: {} is a symlink; a folder Sift writes must be a real folder, so that nothing is "
        "written outside it (give the link's target instead)",
        key, dir));
  }
  if (!create) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("{}: cannot create {}: {}", key, dir, ec.message()));
  // Made meanwhile by another process as a link: checked again once it exists.
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw Error(fmt::format("{}: {} is not a folder", key, dir));
  }
}

}  // namespace sift
