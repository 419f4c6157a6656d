#include "framework/train/epoch_loop.h"

#include <limits>
#include <thread>

#include "framework/train/run_report.h"

namespace sift {

void EpochLoop::start(const TrainConfig& t, int64_t total, int64_t step, int64_t state_bytes) {
  total_steps = total;
  step_limit = t.max_steps > 0 ? t.max_steps : std::numeric_limits<int64_t>::max();
  first_step = step;
  save_interval = std::chrono::duration<double>(t.checkpoint_minutes * 60.0);
  last_save = Clock::now();
  saves = SavePolicy(t.save_last, state_bytes);
}

void EpochLoop::save(PhaseTimes& phases, const std::function<void()>& write) {
  PhaseTimer timer(phases, Phase::checkpoint);
  const auto start = Clock::now();
  write();
  last_save = Clock::now();
  saves.saved(std::chrono::duration<double>(last_save - start).count());
}

bool EpochLoop::epoch_end_saves(SaveLast mode, Progress& progress,
                                const std::function<bool(bool)>& agree) {
  const double trained = std::chrono::duration<double>(Clock::now() - last_save).count();
  const bool mine = saves.saves_at_epoch_end(trained);
  const bool saves_now = agree ? agree(mine) : mine;
  if (!saves_now && mode == SaveLast::automatic && !skipped_save_said) {
    skipped_save_said = true;
    progress.log_to_file_only(unsaved_epoch_end(saves.save_seconds(), trained));
  }
  return saves_now;
}

int64_t total_steps(const Task& task, const TrainConfig& t, int64_t per_batch) {
  const int64_t batches = (static_cast<int64_t>(task.train_records) + per_batch - 1) / per_batch;
  const int64_t total = (batches + t.accumulate - 1) / t.accumulate * t.epochs;
  return t.max_steps > 0 ? std::min(total, t.max_steps) : total;
}

nlohmann::json train_summary(const TrainingState& s, const Task& task, const TrainConfig& t,
                             const EpochLoop& loop, const LoopFigures& f) {
  const int64_t steps = s.step - loop.first_step;
  const double per_second =
      f.seconds > 0 ? static_cast<double>(steps * t.accumulate * t.batch_size * f.world) / f.seconds
                    : 0.0;
  return {{"steps", s.step},
          {"examples", f.examples},
          {"seconds", f.seconds},
          {"examples_per_second", per_second},
          {"records", task.train_records},
          {"skipped_records", task.train_skipped},
          {"empty_texts", task.train_empty_texts},
          {"workers", f.workers},
          {"stopped_early", loop.stopped},
          {"precision", to_string(t.precision)},
          {"training_path", f.training_path},
          {"gradient_checkpointing", to_string(t.gradient_checkpointing)},
          {"skipped_steps", f.skipped_steps},
          {"skipped_nonfinite_batches", s.skipped_batches},
          {"best_epoch", s.best_epoch}};
}

void add_phases(nlohmann::json& summary, const PhaseTimes& phases, Progress& progress,
                int64_t steps, int64_t readers, int64_t trainers) {
  summary["phases"] =
      phases.to_json(progress.elapsed_seconds(), steps,
                     data_bound_remedy(readers, trainers, std::thread::hardware_concurrency()));
  if (summary["phases"].contains("bottleneck")) {
    progress.log(summary["phases"]["bottleneck"].get<std::string>());
  }
}

}  // namespace sift
