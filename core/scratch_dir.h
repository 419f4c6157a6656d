// A private temporary folder for files that loaders read from disk (an export's extra
// files: config.yaml, tokenizer.model), removed with everything in it on scope exit.
#pragma once

#include <string>

namespace sift {

class ScratchDir {
 public:
  ScratchDir();  // sift::Error when no folder can be made
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  // Writes `bytes` to `name` inside the folder; returns its path.
  std::string write(const std::string& name, const std::string& bytes) const;

 private:
  std::string path_;
};

}  // namespace sift
