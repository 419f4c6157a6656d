#include "framework/train/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace sift {
namespace {

std::string clock_text(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{:02}:{:02}", s / 60, s % 60);
}

}  // namespace

Progress::Progress(int64_t total_steps, int64_t log_every, bool quiet)
    : total_steps_(total_steps),
      log_every_(log_every > 0 ? log_every : std::max<int64_t>(total_steps / 20, 1)),
      terminal_(isatty(STDERR_FILENO) == 1),
      quiet_(quiet),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

double Progress::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::update(int64_t step, int64_t epoch, int64_t examples, double loss, double lr) {
  if (quiet_) return;
  const auto now = std::chrono::steady_clock::now();
  const bool last = total_steps_ > 0 && step >= total_steps_;
  if (terminal_ && !last && now - last_draw_ < std::chrono::milliseconds(100)) return;
  if (!terminal_ && step % log_every_ != 0 && !last) return;
  last_draw_ = now;
  const double elapsed = elapsed_seconds();
  const double rate = elapsed > 0 ? examples / elapsed : 0.0;
  std::string eta = "--:--";
  if (total_steps_ > 0 && step > 0) eta = clock_text(elapsed * (total_steps_ - step) / step);
  if (terminal_) {
    const int width = 24;
    const int filled = total_steps_ > 0 ? static_cast<int>(width * step / total_steps_) : 0;
    const std::string bar = std::string(filled, '#') + std::string(width - filled, '.');
    std::fprintf(stderr, "\r[%s] epoch %lld step %lld/%lld  loss %.4f  lr %.3g  %.0f ex/s  ETA %s ",
                 bar.c_str(), static_cast<long long>(epoch), static_cast<long long>(step),
                 static_cast<long long>(total_steps_), loss, lr, rate, eta.c_str());
    bar_open_ = true;
  } else {
    std::fprintf(stderr, "epoch %lld step %lld/%lld loss %.4f lr %.3g %.0f ex/s elapsed %s ETA %s\n",
                 static_cast<long long>(epoch), static_cast<long long>(step),
                 static_cast<long long>(total_steps_), loss, lr, rate,
                 clock_text(elapsed).c_str(), eta.c_str());
  }
  std::fflush(stderr);
}

void Progress::finish_line() {
  if (bar_open_) std::fputc('\n', stderr);
  bar_open_ = false;
}

void Progress::log(const std::string& message) {
  if (quiet_) return;
  finish_line();
  std::fprintf(stderr, "%s\n", message.c_str());
}

}  // namespace sift
