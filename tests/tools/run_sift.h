// Running the `sift` executable from a test: exit status, stdout and stderr; and the
// check that a failure is one clean "sift: error: ..." line.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <string>
#include <vector>

#include "tests/test_files.h"

namespace sift::testing {

struct SiftResult {
  int status = -1;
  std::string out, err;
};

inline std::ostream& operator<<(std::ostream& os, const SiftResult& r) {
  return os << "exit " << r.status << "\n--- stdout:\n" << r.out << "--- stderr:\n" << r.err;
}

// A shell command line run in `cwd` with `input` on stdin; `scratch` is a folder for
// the captured streams.
inline SiftResult run_command(const std::string& command_line, const std::string& scratch,
                              const std::string& input = "", const std::string& cwd = ".") {
  const std::string in = scratch + "/stdin", out = scratch + "/stdout", err = scratch + "/stderr";
  write_file(in, input);
  const std::string command = "cd " + quote(cwd) + " && " + command_line + " <" + quote(in) +
                              " >" + quote(out) + " 2>" + quote(err);
  const int rc = std::system(command.c_str());
  SiftResult r;
  if (rc != -1 && WIFEXITED(rc)) r.status = WEXITSTATUS(rc);
  if (rc != -1 && WIFSIGNALED(rc)) r.status = 128 + WTERMSIG(rc);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// `sift ARGS`, as run_command runs a command line.
inline SiftResult run_sift(const std::string& args, const std::string& scratch,
                           const std::string& input = "", const std::string& cwd = ".") {
  return run_command(quote(SIFT_BINARY) + " " + args, scratch, input, cwd);
}

// A page file opened by Debian's chromium, headless (tools/setup.sh installs it), doing
// `what` ("--dump-dom", or "--screenshot=PATH --window-size=W,H"): its output, and the
// browser's log (console messages included) on stderr. `dir` keeps the browser's profile.
inline SiftResult headless_chromium(const std::string& page, const std::string& what,
                                    const std::string& dir) {
  const std::string flags =
      "--headless --disable-gpu --no-sandbox --no-first-run --disable-extensions "
      "--user-data-dir=" +
      quote(dir + "/chromium") + " --enable-logging=stderr --v=0 ";
  return run_command("chromium " + flags + what + " " + quote("file://" + page), dir);
}

// The elements of `page` that reach past the right edge of a `width` px window (headless
// Chromium's layout; the page scrolls sideways when any does), as "TAG.class:right" words,
// after the window's inner width: "785" when nothing does. A copy of the page without its
// Content-Security-Policy runs one script that measures it.
inline std::string elements_past_the_edge(const std::string& page, int width,
                                          const std::string& dir) {
  std::string html = slurp(page);
  const size_t csp = html.find("<meta http-equiv=\"Content-Security-Policy\"");
  if (csp != std::string::npos) html.erase(csp, html.find('>', csp) + 1 - csp);
  const std::string script =
      "<script>var w=document.documentElement.clientWidth,out=[w];"
      "document.querySelectorAll('body *').forEach(function(e){var r=e.getBoundingClientRect();"
      "if(r.right>w+1)out.push(e.tagName+'.'+e.className+':'+Math.round(r.right))});"
      "document.body.setAttribute('data-wide',out.join(' '))</script>";
  html.insert(html.rfind("</body>"), script);
  const std::string copy = dir + "/measured.html";
  write_file(copy, html);
  const SiftResult r =
      headless_chromium(copy, "--window-size=" + std::to_string(width) + ",2000 --dump-dom", dir);
  const size_t at = r.out.find("data-wide=\"");
  if (at == std::string::npos) return "no measurement: " + r.err.substr(0, 400);
  return r.out.substr(at + 11, r.out.find('"', at + 11) - at - 11);
}

// A failed command: non-zero exit, exactly one "sift: error: ..." line on stderr holding
// every one of `wanted`, and no trace of an uncaught exception or a LibTorch backtrace.
inline ::testing::AssertionResult CleanSiftError(const SiftResult& r,
                                                 const std::vector<std::string>& wanted) {
  auto fail = [&](const std::string& why) {
    return ::testing::AssertionFailure() << why << "\n" << r;
  };
  if (r.status == 0) return fail("expected a non-zero exit status");
  if (r.status >= 128) return fail("killed by a signal");
  for (const char* trace : {"terminate called", "Exception raised from", "frame #"}) {
    if (r.err.find(trace) != std::string::npos) return fail(std::string("stderr holds ") + trace);
  }
  if (r.err.rfind("sift: error: ", 0) != 0) return fail("stderr must start with 'sift: error: '");
  if (r.err.back() != '\n' || r.err.find('\n') != r.err.size() - 1) {
    return fail("stderr must be exactly one line");
  }
  for (const auto& w : wanted) {
    if (r.err.find(w) == std::string::npos) return fail("stderr lacks '" + w + "'");
  }
  return ::testing::AssertionSuccess();
}

}  // namespace sift::testing
