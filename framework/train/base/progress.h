// Training progress: a redrawn bar on a terminal (examples/s, loss, ETA), plain log lines
// otherwise (files, CI), so logs stay readable.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace sift {

// The training loss a progress line shows: the mean per example of steps first..last
// (metrics.csv's train_loss of the row written at `last`, or the steps since its last row).
struct LossWindow {
  double mean = 0.0;
  int64_t first_step = 0;
  int64_t last_step = 0;
};

class Progress {
 public:
  // total_steps may be 0 when unknown; log_every is used when not on a terminal (0: about
  // 20 lines an epoch of the run's `epochs`).
  Progress(int64_t total_steps, int64_t log_every, bool quiet = false, int64_t epochs = 1);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  // Also appends every log line, with a UTC timestamp, to `path` (RUN/train.log), quiet
  // or not, on a terminal or not.
  void open_log_file(const std::string& path);
  void update(int64_t step, int64_t epoch, int64_t examples, const LossWindow& loss, double lr);
  // Words added to the following progress lines (distillation: the teacher's share).
  void set_note(std::string note) { note_ = std::move(note); }
  // Ends the bar's line before other output.
  void finish_line();
  // A log line that does not collide with the bar.
  void log(const std::string& message);
  // A line for train.log only: a routine decision the console need not show.
  void log_to_file_only(const std::string& message) { to_log_file(message); }
  double elapsed_seconds() const;
  // Steps between log lines (and metrics.csv rows): train.log_every, or a 20th of an epoch.
  int64_t log_every() const { return log_every_; }

 private:
  int64_t total_steps_;
  int64_t log_every_;
  bool terminal_;
  bool quiet_;
  bool bar_open_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  std::FILE* log_file_ = nullptr;
  std::string note_;

  void to_log_file(const std::string& message);
};

}  // namespace sift
