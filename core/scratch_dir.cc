#include "core/scratch_dir.h"

#include <stdlib.h>

#include <filesystem>

#include "core/atomic_file.h"
#include "core/error.h"

namespace sift {

namespace fs = std::filesystem;

ScratchDir::ScratchDir() {
  std::string pattern = (fs::temp_directory_path() / "sift-export-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw Error("cannot create a temporary folder for the export");
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

std::string ScratchDir::write(const std::string& name, const std::string& bytes) const {
  const std::string file = (fs::path(path_) / name).string();
  write_file_atomically(file, bytes);
  return file;
}

}  // namespace sift
