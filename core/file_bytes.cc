#include "core/file_bytes.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace sift {

std::string read_file_bytes(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot open {}{}: {}", what, path, std::strerror(errno)));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace sift
