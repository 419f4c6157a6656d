// The golden run's fixture (tests/data/golden: golden.yaml, train.txt, test.txt: a tiny
// fastText run) copied into a fresh temporary folder, for the CLI tests that train it.
#pragma once

#include <filesystem>
#include <string>

#include "tests/test_files.h"

namespace sift::testing {

inline std::string golden_fixture_copy(const std::string& prefix) {
  const std::string dir = make_temp_dir(prefix);
  const std::string from = std::string(SIFT_SOURCE_DIR) + "/tests/data/golden/";
  for (const char* name : {"golden.yaml", "train.txt", "test.txt"}) {
    std::filesystem::copy_file(from + name, dir + "/" + name);
  }
  return dir;
}

}  // namespace sift::testing
