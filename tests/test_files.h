// Files in tests: whole-file reads and writes, lines, temporary folders, shell quoting;
// and the message of the sift::Error a call throws.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"

namespace sift::testing {

// `s` in single quotes for a shell command line.
inline std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One folder per test process under the test temporary directory, removed with all the
// test's folders when the process exits (ctest runs each test in a process of its own;
// before this, a suite run left about 3,000 folders in /tmp). A child forked from the
// test does not remove it; SIFT_KEEP_TEST_FILES=1 keeps it to look at.
class TempRoot {
 public:
  TempRoot() : owner_(getpid()) {
    std::string pattern = ::testing::TempDir() + "sift_test_XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp " << pattern;
    path_ = pattern;
  }
  ~TempRoot() {
    const char* keep = getenv("SIFT_KEEP_TEST_FILES");
    if (getpid() != owner_ || (keep != nullptr && std::string(keep) == "1")) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempRoot(const TempRoot&) = delete;
  TempRoot& operator=(const TempRoot&) = delete;
  const std::string& path() const { return path_; }

 private:
  pid_t owner_;
  std::string path_;
};

inline const std::string& temp_root() {
  static const TempRoot root;
  return root.path();
}

// A new folder under this process's temporary root, named PREFIX_XXXXXX.
inline std::string make_temp_dir(const std::string& prefix) {
  std::string pattern = temp_root() + "/" + prefix + "_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp " << pattern;
  return pattern;
}

// The message of the sift::Error `f` throws; a test failure when it throws none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a sift::Error";
  return "(no error)";
}

// For EXPECT_CONTAINS: whether `text` contains `sub`, showing both when it does not.
inline ::testing::AssertionResult Contains(const char* text_expr, const char* sub_expr,
                                           const std::string& text, const std::string& sub) {
  if (text.find(sub) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << text_expr << " does not contain " << sub_expr
                                       << "\n  text: " << text << "\n  want: " << sub;
}

}  // namespace sift::testing

#define EXPECT_CONTAINS(text, sub) EXPECT_PRED_FORMAT2(::sift::testing::Contains, text, sub)
