// Running the `sift` executable from a test: exit status, stdout and stderr; and the
// check that a failure is one clean "sift: error: ..." line.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sift::testing {

struct SiftResult {
  int status = -1;
  std::string out, err;
};

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

// `sift ARGS` run in `cwd` with `input` on stdin; `scratch` is a folder for the captured
// streams. Paths must not hold a single quote.
inline SiftResult run_sift(const std::string& args, const std::string& scratch,
                           const std::string& input = "", const std::string& cwd = ".") {
  const std::string in = scratch + "/stdin", out = scratch + "/stdout", err = scratch + "/stderr";
  std::ofstream(in) << input;
  const std::string command = "cd '" + cwd + "' && '" + std::string(SIFT_BINARY) + "' " + args +
                              " <'" + in + "' >'" + out + "' 2>'" + err + "'";
  const int rc = std::system(command.c_str());
  SiftResult r;
  if (rc != -1 && WIFEXITED(rc)) r.status = WEXITSTATUS(rc);
  if (rc != -1 && WIFSIGNALED(rc)) r.status = 128 + WTERMSIG(rc);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

inline ::testing::AssertionResult CleanSiftError(const SiftResult& r,
                                                 const std::vector<std::string>& wanted) {
  if (r.status == 0 || r.status >= 128) {
    return ::testing::AssertionFailure() << "exit " << r.status << "\n" << r.out << r.err;
  }
  if (r.err.rfind("sift: error: ", 0) != 0 || r.err.find('\n') != r.err.size() - 1) {
    return ::testing::AssertionFailure() << "not one 'sift: error:' line:\n" << r.err;
  }
  for (const auto& w : wanted) {
    if (r.err.find(w) == std::string::npos) {
      return ::testing::AssertionFailure() << "stderr lacks '" << w << "':\n" << r.err;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace sift::testing
