#include "framework/train/base/progress.h"

#include <fmt/format.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "core/error.h"
#include "core/open_for_writing.h"

namespace sift {
namespace {

std::string clock_text(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{:02}:{:02}", s / 60, s % 60);
}

// "2026-12-01T02:49:17.123Z": train.log's timestamps, in UTC.
std::string timestamp() {
  timeval tv{};
  gettimeofday(&tv, nullptr);
  tm utc{};
  gmtime_r(&tv.tv_sec, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:03}Z", text, tv.tv_usec / 1000);
}

}  // namespace

Progress::Progress(int64_t total_steps, int64_t log_every, bool quiet, int64_t epochs)
    : total_steps_(total_steps),
      // 0: the nearest whole number of steps to a 20th of an epoch.
      log_every_(log_every > 0 ? log_every
                               : std::max<int64_t>(
                                     (total_steps / std::max<int64_t>(epochs, 1) + 10) / 20, 1)),
      terminal_(isatty(STDERR_FILENO) == 1),
      quiet_(quiet),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() {
  if (log_file_ != nullptr) std::fclose(log_file_);
}

void Progress::open_log_file(const std::string& path) {
  log_file_ = fopen_for_writing(path, WriteMode::append);
}

void Progress::to_log_file(const std::string& message) {
  if (log_file_ == nullptr) return;
  // Flushed per line (about 20 a run by default), never fsync'ed.
  std::fprintf(log_file_, "%s %s\n", timestamp().c_str(), message.c_str());
  std::fflush(log_file_);
}

double Progress::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::update(int64_t step, int64_t epoch, int64_t examples, const LossWindow& loss,
                      double lr) {
  const bool last = total_steps_ > 0 && step >= total_steps_;
  const bool log_step = step % log_every_ == 0 || last;
  if (quiet_ && (!log_step || log_file_ == nullptr)) return;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = elapsed_seconds();
  const double rate = elapsed > 0 ? examples / elapsed : 0.0;
  std::string eta = "--:--";
  if (total_steps_ > 0 && step > 0) eta = clock_text(elapsed * (total_steps_ - step) / step);
  const std::string note = note_.empty() ? "" : " " + note_;
  const std::string steps =
      loss.first_step >= loss.last_step
          ? fmt::format("step {}", loss.last_step)
          : fmt::format("mean of steps {}-{}", loss.first_step, loss.last_step);
  const std::string line = fmt::format(
      "epoch {} step {}/{} train_loss {:.4f} ({}) lr {:.3g} {:.0f} ex/s{} elapsed {} ETA {}", epoch,
      step, total_steps_, loss.mean, steps, lr, rate, note, clock_text(elapsed), eta);
  if (log_step) to_log_file(line);
  if (quiet_) return;
  if (terminal_ && !last && now - last_draw_ < std::chrono::milliseconds(100)) return;
  if (!terminal_ && !log_step) return;
  last_draw_ = now;
  if (terminal_) {
    const int width = 24;
    const int filled = total_steps_ > 0 ? static_cast<int>(width * step / total_steps_) : 0;
    const std::string bar = std::string(filled, '#') + std::string(width - filled, '.');
    std::fprintf(
        stderr,
        "\r[%s] epoch %lld step %lld/%lld  train_loss %.4f (%s)  lr %.3g  %.0f ex/s%s  ETA %s ",
        bar.c_str(), static_cast<long long>(epoch), static_cast<long long>(step),
        static_cast<long long>(total_steps_), loss.mean, steps.c_str(), lr, rate, note.c_str(),
        eta.c_str());
    bar_open_ = true;
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

void Progress::finish_line() {
  if (bar_open_) std::fputc('\n', stderr);
  bar_open_ = false;
}

void Progress::log(const std::string& message) {
  to_log_file(message);
  if (quiet_) return;
  finish_line();
  std::fprintf(stderr, "%s\n", message.c_str());
}

}  // namespace sift
