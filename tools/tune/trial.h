// One trial of `sift tune`: an ordinary `sift train` run in its own process (so a trial
// that runs out of memory or is stopped cannot take the search down) and its own run
// folder, watched through the validation lines it appends to metrics.jsonl.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace sift {

// One validation of a running trial: the epoch it ended and the tuned metric there.
struct Validation {
  int64_t epoch = 0;
  double metric = 0.0;
};

class TrialProcess {
 public:
  // Starts `argv` (argv[0] a path) in a process group of its own, with stdout and stderr
  // into `log_path` (appended to with `append_log`: a resumed trial); its metrics file is
  // `metrics_path`, and `field` the metrics.jsonl key of the tuned metric.
  TrialProcess(const std::vector<std::string>& argv, const std::string& log_path,
               std::string metrics_path, std::string field, bool append_log = false);
  ~TrialProcess();
  TrialProcess(const TrialProcess&) = delete;
  TrialProcess& operator=(const TrialProcess&) = delete;

  // Validations appended since the last call (whole lines only).
  std::vector<Validation> new_validations();
  // False once the process has ended (reaps it).
  bool running();
  // The exit code once ended (128 + signal when killed by one).
  int exit_code() const { return exit_code_; }
  // Sends `signal` to the trial's process group (SIGTERM: the run saves last.ckpt and
  // stops; SIGKILL: at once). The group is the trial's own: a Ctrl-C at the terminal
  // reaches `sift tune` only, which stops its trials itself and records them.
  void signal(int signal) const;
  double seconds() const;

 private:
  pid_t pid_ = -1;
  int exit_code_ = -1;
  std::string metrics_path_;
  std::string field_;
  int64_t offset_ = 0;  // bytes of metrics.jsonl already read
  std::chrono::steady_clock::time_point start_;
};

}  // namespace sift
