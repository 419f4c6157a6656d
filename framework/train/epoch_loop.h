// What both trainers' epoch loops hold and do besides their steps (trainer.cc with
// LibTorch, lite_trainer.cc without), written once: the streams, the step horizon and
// limit, when last.ckpt is written, and report.json's "train" figures of the loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "config/config.h"
#include "datasets/sharded_stream.h"
#include "framework/runtime/task.h"
#include "framework/train/phases.h"
#include "framework/train/progress.h"
#include "framework/train/save_policy.h"
#include "framework/train/training_state.h"

namespace sift {

struct EpochLoop {
  using Clock = std::chrono::steady_clock;

  const TextEncoder* encoder = nullptr;
  std::unique_ptr<ShardedStream> batches;
  std::unique_ptr<ShardedStream> valid;  // null without validation data
  // The schedule's horizon; with data.max_tokens batches are cut by size, so it is an
  // estimate, and epochs end when the data does, not at a step count.
  int64_t total_steps = 0;
  int64_t step_limit = 0;
  int64_t first_step = 0;
  std::chrono::duration<double> save_interval{0};
  Clock::time_point last_save;
  SavePolicy saves{SaveLast::epoch, 0};  // which epoch ends save (train.save_last)
  bool skipped_save_said = false;        // the first skipped epoch save is logged
  bool stopped = false;

  // The limit and save timing of `t` for a loop that starts at `step`; SavePolicy
  // estimates the first save from `state_bytes`.
  void start(const TrainConfig& t, int64_t total, int64_t step, int64_t state_bytes);
  // Whether train.checkpoint_minutes have passed since the last save (or the start).
  bool save_due() const { return Clock::now() - last_save >= save_interval; }
  // Runs `write` (last.ckpt) as a save: timed as Phase::checkpoint and for SavePolicy.
  void save(PhaseTimes& phases, const std::function<void()>& write);
  // train.save_last at an epoch's end (SavePolicy); `agree` lets a group of ranks decide
  // as rank 0 does. The first epoch end that does not save says why, once, in the log.
  bool epoch_end_saves(SaveLast mode, Progress& progress,
                       const std::function<bool(bool)>& agree = {});
};

// The optimizer steps of the run: train.epochs over the task's training records,
// `per_batch` records a batch, train.accumulate batches a step, at most train.max_steps.
int64_t total_steps(const Task& task, const TrainConfig& t, int64_t per_batch);

// What a trainer says of its loop for report.json's "train" besides the counters.
struct LoopFigures {
  double seconds = 0.0;
  int64_t examples = 0;  // over all ranks
  int64_t world = 1;
  int64_t workers = 0;  // data workers
  std::string training_path;
  int64_t skipped_steps = 0;  // loss scaling's
};

// report.json's "train": steps, examples and their rate, records, how the loop ended.
nlohmann::json train_summary(const TrainingState& s, const Task& task, const TrainConfig& t,
                             const EpochLoop& loop, const LoopFigures& f);

// Adds summary["phases"] (where the time went) and logs its bottleneck, if any: `readers`
// read the data for `trainers` threads.
void add_phases(nlohmann::json& summary, const PhaseTimes& phases, Progress& progress,
                int64_t steps, int64_t readers, int64_t trainers);

}  // namespace sift
