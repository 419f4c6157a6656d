#include "core/append_line.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/open_for_writing.h"

namespace sift {

// Checked through the write and the close: a full disk fails there, and an unchecked
// stream left metrics.jsonl at 0 bytes without a word (issue #19). Opened through
// open_for_writing: a symlink at the name is refused, never followed (issue #42).
void append_line(const std::string& path, const std::string& line) {
  const int fd = open_for_writing(path, WriteMode::append);
  const std::string text = line + "\n";
  size_t done = 0;
  int e = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      e = n < 0 ? errno : ENOSPC;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 && e == 0) e = errno;
  if (e != 0) throw Error(fmt::format("cannot write {}: {}", path, std::strerror(e)));
}

}  // namespace sift
