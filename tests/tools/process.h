// Starting `sift` as a child process that a test can signal, and waiting for it.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace sift::testing {

// `sift ARGS` started in `dir` with stdout/stderr to dir/out, dir/err; returns its pid.
inline pid_t start_sift(const std::string& dir, std::vector<std::string> args) {
  std::vector<char*> argv{const_cast<char*>(SIFT_BINARY)};
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string out = dir + "/out", err = dir + "/err";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || ::chdir(dir.c_str()) != 0) ::_exit(126);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::execv(SIFT_BINARY, argv.data());
    ::_exit(127);
  }
  return pid;
}

// The exit status as a shell gives it: 128 + signal for a killed process.
inline int wait_for(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

// Polls for `path` (for up to a minute: a run that fails never writes it).
inline void wait_for_file(const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!std::filesystem::exists(path) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace sift::testing
