#include "core/file_bytes.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/error.h"

namespace sift {

std::string read_file_bytes(const std::string& path, std::string_view what) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) throw Error(fmt::format("cannot open {}{}: {}", what, path, std::strerror(errno)));
  std::string data;
  char buffer[1 << 16];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) data.append(buffer, got);
  if (std::ferror(file.get())) {  // a folder (EISDIR), an I/O error
    throw Error(fmt::format("cannot read {}{}: {}", what, path, std::strerror(errno)));
  }
  return data;
}

}  // namespace sift
