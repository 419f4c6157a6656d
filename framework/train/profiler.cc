#include "framework/train/profiler.h"

#include <ATen/record_function.h>
#include <torch/csrc/autograd/profiler_legacy.h>

#include <filesystem>

#include "core/atomic_file.h"
#include "core/open_for_writing.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/train/base/phases.h"

namespace sift {
namespace {

// A phase's named range in the trace, closed when the handle is released.
std::shared_ptr<void> record_range(const char* name) {
  auto range = std::make_shared<at::RecordFunction>(at::RecordScope::USER_SCOPE);
  if (range->isActive()) range->before(name);
  return range;
}

}  // namespace

StepProfiler::StepProfiler(std::string dir, ProfileWindow window, PhaseTimes& phases)
    : dir_(std::move(dir)), window_(window), phases_(phases) {}

StepProfiler::~StepProfiler() {
  // An error or a signal ended the run inside the window: the profiler still stops, so
  // that the thread is not left recording; the partial trace is not written.
  if (recording_) phases_.set_tracer(nullptr);
}

void StepProfiler::before_step(int64_t step) {
  if (window_.steps <= 0 || done_) return;
  if (!recording_ && step >= window_.from && step < window_.from + window_.steps) start(step);
  if (recording_ && step >= window_.from + window_.steps) stop(step);
}

void StepProfiler::start(int64_t step) {
  first_ = step;
  phases_.set_tracer(record_range);
  recording_ = std::make_unique<torch::autograd::profiler::RecordProfile>(trace_);
}

void StepProfiler::stop(int64_t step) {
  recording_.reset();  // writes the events to trace_
  phases_.set_tracer(nullptr);
  last_ = step;
  done_ = true;
  const std::filesystem::path folder = std::filesystem::path(dir_) / kProfileFolder;
  check_own_folder(folder.string(), "train.profile", /*create=*/true);
  write_file_atomically((folder / kProfileTraceFile).string(), trace_.str());
  trace_.str({});
}

void StepProfiler::finish(int64_t step) {
  if (recording_) stop(step);
}

nlohmann::json StepProfiler::to_json() const {
  if (!done_) return nullptr;
  return {{"trace", std::string(kProfileFolder) + "/" + kProfileTraceFile},
          {"first_step", first_},
          {"steps", last_ - first_},
          {"profiler", "torch::autograd::profiler (legacy; Chrome trace format)"}};
}

}  // namespace sift
