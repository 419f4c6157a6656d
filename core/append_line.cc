#include "core/append_line.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.h"

namespace sift {

// Checked through the flush and the close: a full disk fails there, not at `<<`, and an
// unchecked stream left metrics.jsonl at 0 bytes without a word (issue #19).
void append_line(const std::string& path, const std::string& line) {
  errno = 0;
  std::ofstream out(path, std::ios::app);
  out << line << "\n";
  out.flush();
  if (out) out.close();
  if (!out) {
    throw Error(fmt::format("cannot write {}: {}", path,
                            errno != 0 ? std::strerror(errno) : "write failed"));
  }
}

}  // namespace sift
