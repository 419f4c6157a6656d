#include "tools/tune/trial.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/open_for_writing.h"

extern char** environ;

namespace sift {

TrialProcess::TrialProcess(const std::vector<std::string>& argv, const std::string& log_path,
                           std::string metrics_path, std::string field, bool append_log)
    : metrics_path_(std::move(metrics_path)),
      field_(std::move(field)),
      start_(std::chrono::steady_clock::now()) {
  // Opened here, not by the child: through open_for_writing, which follows no symlink.
  const int log = open_for_writing(log_path, append_log ? WriteMode::append : WriteMode::truncate);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, log, 1);
  posix_spawn_file_actions_adddup2(&actions, log, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);  // a new group, led by the trial
  const int rc = posix_spawn(&pid_, args[0], &actions, &attributes, args.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(log);
  if (rc != 0) {
    throw Error(fmt::format("cannot start a trial ({}): {}", argv[0], std::strerror(rc)));
  }
}

TrialProcess::~TrialProcess() {
  if (exit_code_ >= 0 || pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
}

std::vector<Validation> TrialProcess::new_validations() {
  std::vector<Validation> found;
  std::ifstream in(metrics_path_, std::ios::binary);
  if (!in) return found;
  in.seekg(offset_);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // a line still being written: read it next time
    offset_ += static_cast<int64_t>(line.size()) + 1;
    const auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!record.is_object() || !record.contains(field_)) continue;
    if (!record.value("end_of_epoch", false)) continue;
    found.push_back({record.value("epoch", int64_t{0}), record[field_].get<double>()});
  }
  return found;
}

bool TrialProcess::running() {
  if (exit_code_ >= 0) return false;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  exit_code_ = r < 0                 ? 1
               : WIFEXITED(status)   ? WEXITSTATUS(status)
               : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                     : 1;
  return false;
}

void TrialProcess::signal(int sig) const {
  if (exit_code_ < 0 && pid_ > 0) ::kill(-pid_, sig);
}

double TrialProcess::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace sift
