// train.profile: LibTorch's own profiler over a window of steps, saved as a Chrome trace
// (RUN/profile/trace.json: open it in chrome://tracing or ui.perfetto.dev). Every
// operator is there, inside the phases of phases.h as named ranges (data_wait, copy,
// forward, backward, allreduce, optimizer, checkpoint, validation).
//
// Debian's LibTorch 1.13 is built without Kineto (ProfilerResult::save throws "requires
// Kineto"), so this is the legacy profiler (torch::autograd::profiler::RecordProfile),
// which records the thread that trains: the loop, forward and backward on the CPU.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace torch::autograd::profiler {
struct RecordProfile;
}

namespace sift {

class PhaseTimes;

struct ProfileWindow {
  int64_t from = 0;   // the first optimizer step recorded (0-based count of steps taken)
  int64_t steps = 0;  // how many; 0: no profiling
};

class StepProfiler {
 public:
  // `dir` is the run folder; a window of 0 steps records nothing.
  StepProfiler(std::string dir, ProfileWindow window, PhaseTimes& phases);
  ~StepProfiler();
  StepProfiler(const StepProfiler&) = delete;
  StepProfiler& operator=(const StepProfiler&) = delete;

  // Before each step, with the number of steps taken so far: starts or ends the window.
  void before_step(int64_t step);
  // At the end of training, with the steps taken: ends a window the run ended inside,
  // and writes it.
  void finish(int64_t step);
  // For report.json: where the trace is and which steps it holds (null: none recorded).
  nlohmann::json to_json() const;

 private:
  void start(int64_t step);
  void stop(int64_t step);

  std::string dir_;
  ProfileWindow window_;
  PhaseTimes& phases_;
  std::ostringstream trace_;
  std::unique_ptr<torch::autograd::profiler::RecordProfile> recording_;
  int64_t first_ = -1, last_ = -1;  // the steps recorded, [first_, last_)
  bool done_ = false;
};

}  // namespace sift
