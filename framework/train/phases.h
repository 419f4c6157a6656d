// Where a run's wall time goes: steady_clock around each phase of the training loop,
// always on (two clock reads per phase and batch: about 50 ns against steps of 100 us
// and more), reported as share of wall time and ms per step, with the peak RSS, in
// report.json and report.txt. A run that mostly waits on its data says so.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace sift {

enum class Phase {
  data_wait,   // next_batch: waiting for the stream's workers (and agreeing over ranks)
  copy,        // collate: the batch's tensors, on their device
  forward,     // model and loss
  backward,    // backward and reading the loss
  allreduce,   // averaging gradients over the ranks
  optimizer,   // unscale, clip, step, zero_grad
  checkpoint,  // saving last.ckpt / best.ckpt
  validation,  // validations during training
  teacher,     // distillation: the teacher's forward (a step phase; listed after copy)
};
inline constexpr size_t kPhaseCount = 9;

class PhaseTimes {
 public:
  void add(Phase phase, std::chrono::steady_clock::duration d) {
    totals_[static_cast<size_t>(phase)] += d;
  }
  double seconds(Phase phase) const {
    return std::chrono::duration<double>(totals_[static_cast<size_t>(phase)]).count();
  }
  // The table over `wall_seconds` of training and `steps` optimizer steps, with
  // "other" (the rest of the wall time), peak_rss_bytes and, when data wait is a large
  // share of the step time, "bottleneck": the sentence the report shows.
  nlohmann::json to_json(double wall_seconds, int64_t steps) const;

 private:
  std::array<std::chrono::steady_clock::duration, kPhaseCount> totals_{};
};

// report.json's "phases" as report.txt's table.
std::string phase_table_text(const nlohmann::json& phases);

// Adds the time from construction to destruction to `phase`.
class PhaseTimer {
 public:
  PhaseTimer(PhaseTimes& times, Phase phase)
      : times_(times), phase_(phase), start_(std::chrono::steady_clock::now()) {}
  ~PhaseTimer() { times_.add(phase_, std::chrono::steady_clock::now() - start_); }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  PhaseTimes& times_;
  Phase phase_;
  std::chrono::steady_clock::time_point start_;
};

// The process's peak resident set size so far (getrusage), in bytes.
int64_t peak_rss_bytes();

}  // namespace sift
