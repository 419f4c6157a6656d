#include "core/sibling_program.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

namespace sift {

std::string sibling_program(const std::string& name) {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string dir = ".";
  if (n > 0) {
    const std::string path(self, static_cast<size_t>(n));
    dir = path.substr(0, path.rfind('/'));
  }
  return dir + "/" + name;
}

std::string exec_sibling(const std::string& name, char** argv) {
  const std::string program = sibling_program(name);
  execv(program.c_str(), argv);
  return "cannot start " + program + ": " + std::strerror(errno);
}

}  // namespace sift
