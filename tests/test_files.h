// Files in tests: whole-file reads and writes, lines, temporary folders, shell quoting;
// and the message of the sift::Error a call throws.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

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

// A new folder under the test temporary directory, named PREFIX_XXXXXX.
inline std::string make_temp_dir(const std::string& prefix) {
  std::string pattern = ::testing::TempDir() + prefix + "_XXXXXX";
  return std::string(mkdtemp(pattern.data()));
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
