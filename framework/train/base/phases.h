// Where a run's wall time goes: steady_clock around each phase of the training loop,
// always on (two clock reads per phase and batch: about 50 ns against steps of 100 us
// and more), reported as share of wall time and ms per step, with the peak RSS, in
// report.json and report.txt. A run that mostly waits on its data says so. With
// tensor_memory.h counting, each phase also gets the peak bytes held by CPU tensors while
// it ran; with train.profile, each phase is a named range in the trace (profiler.h).
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
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
  // The fast path's fused SGD step: forward, backward and update in one pass over the
  // batch (train.fast_path). Without it a fast-path run's compute fell into "other" and
  // the 10M-line run reported "data-bound: 100% of step time".
  fused,
};
inline constexpr size_t kPhaseCount = 10;

// What a data-bound run can do: more readers while `readers` (the data threads) and
// `trainers` (the training threads) leave some of the machine's `cores` idle; otherwise
// say that they already use all of them (on 2 cores, 2 readers beside training: "raise
// data.workers" would only add a thread that waits for a core).
std::string data_bound_remedy(int64_t readers, int64_t trainers, unsigned cores);

class PhaseTimes {
 public:
  void add(Phase phase, std::chrono::steady_clock::duration d, int64_t peak_tensor_bytes = 0) {
    const auto i = static_cast<size_t>(phase);
    totals_[i] += d;
    peak_bytes_[i] = std::max(peak_bytes_[i], peak_tensor_bytes);
  }
  double seconds(Phase phase) const {
    return std::chrono::duration<double>(totals_[static_cast<size_t>(phase)]).count();
  }
  // The table over `wall_seconds` of training and `steps` optimizer steps, with
  // "other" (the rest of the wall time), each phase's peak tensor bytes (when counted),
  // peak_rss_bytes and, when data wait is a large
  // share of the step time, "bottleneck": the sentence the report shows, ending in
  // `remedy` (data_bound_remedy).
  nlohmann::json to_json(double wall_seconds, int64_t steps,
                         const std::string& remedy = "raise data.workers") const;

  // train.profile: while the profiler records, each phase opens a named range by
  // `open_range` (the handle closes it when released); null: none.
  using RangeOpener = std::function<std::shared_ptr<void>(const char* name)>;
  void set_tracer(RangeOpener open_range) { open_range_ = std::move(open_range); }
  const RangeOpener& tracer() const { return open_range_; }

 private:
  std::array<std::chrono::steady_clock::duration, kPhaseCount> totals_{};
  std::array<int64_t, kPhaseCount> peak_bytes_{};
  RangeOpener open_range_;
};

const char* phase_name(Phase phase);

// report.json's "phases" as report.txt's table.
std::string phase_table_text(const nlohmann::json& phases);

// Adds the time from construction to destruction to `phase`, and the peak of tensor
// bytes in between.
class PhaseTimer {
 public:
  PhaseTimer(PhaseTimes& times, Phase phase);
  ~PhaseTimer();
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  PhaseTimes& times_;
  Phase phase_;
  std::chrono::steady_clock::time_point start_;
  std::shared_ptr<void> range_;  // only while a profiler records
};

// The process's peak resident set size so far (getrusage), in bytes.
int64_t peak_rss_bytes();

}  // namespace sift
