#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/fuzz/fuzz_target.h"

namespace sift::fuzz {

std::string temp_file(const std::string& name, const uint8_t* data, size_t size) {
  static const std::string dir = [] {
    const std::string d = "/tmp/sift-fuzz-" + std::to_string(::getpid());
    std::filesystem::create_directories(d);
    return d;
  }();
  const std::string path = dir + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f != nullptr) {
    if (size > 0) std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  return path;
}

}  // namespace sift::fuzz
