#include "framework/train/trainer.h"

#include <fmt/format.h>

#include <algorithm>

#include "config/loader.h"
#include "config/run_paths.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "datasets/paths.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/runtime/base/task.h"
#include "framework/runtime/checkpoint.h"
#include "framework/runtime/model_bundle.h"
#include "framework/train/base/progress.h"
#include "framework/train/base/restarts.h"
#include "framework/train/base/run_report.h"
#include "framework/train/base/train_loop.h"
#include "framework/train/distill.h"
#include "framework/train/distributed_training.h"
#include "framework/train/fine_tuning.h"
#include "framework/train/pretraining.h"
#include "framework/train/profiler.h"
#include "framework/train/run.h"
#include "framework/train/saving.h"
#include "framework/train/setup.h"
#include "framework/train/shared_run_folder.h"
#include "framework/train/torch_learner.h"

namespace sift {
namespace {

// train.profile (rank 0): the profiler's window around the chosen steps.
class ProfileObserver : public LoopObserver {
 public:
  explicit ProfileObserver(Run& run)
      : run_(run),
        profiler_(run.dir, ProfileWindow{run.plan.train.profile_from, run.plan.train.profile_steps},
                  run.phases) {}
  void before_step(int64_t step) override { profiler_.before_step(step); }
  void end(int64_t step) override { profiler_.finish(step); }
  // report.json's "profile": where the trace is, or why there is none.
  void add_summary(nlohmann::json& train, Progress& progress) override {
    nlohmann::json j = profiler_.to_json();
    if (j.is_null()) {
      progress.log(
          fmt::format("train.profile: nothing recorded: the run ended at step {}, before "
                      "train.profile_from ({})",
                      run_.state.step, run_.plan.train.profile_from));
    } else {
      progress.log(fmt::format("train.profile: steps {} to {} traced in {}",
                               j["first_step"].get<int64_t>(),
                               j["first_step"].get<int64_t>() + j["steps"].get<int64_t>() - 1,
                               run_file(run_.dir, j["trace"].get<std::string>())));
    }
    train["profile"] = j;
  }

 private:
  const Run& run_;
  StepProfiler profiler_;
};

// train.distill: the progress line's note of the teacher's share of the time.
class TeacherNote : public LoopObserver {
 public:
  explicit TeacherNote(const Run& run) : run_(run) {}
  void after_step(Progress& progress) override {
    progress.set_note(
        teacher_note(run_.phases.seconds(Phase::teacher), progress.elapsed_seconds()));
  }

 private:
  const Run& run_;
};

// What train.init_from kept of the run it starts from (fine_tuning.h), in train.log.
class InitNote : public LoopObserver {
 public:
  explicit InitNote(std::string line) : line_(std::move(line)) {}
  void start(Progress& progress) override {
    for (size_t at = 0; at < line_.size();) {
      const size_t end = std::min(line_.find('\n', at), line_.size());
      progress.log(line_.substr(at, end - at));
      at = end + 1;
    }
  }

 private:
  std::string line_;
};

// A resume's repair of best.ckpt (best_needs_repair): made last.ckpt's file again.
void repair_best(Run& run, const Checkpoint& last) {
  if (!best_needs_repair(run, last)) return;
  run.best.saved = false;
  save_best(run, *torch_learner(run), true);
}

// Trains from where `run` stands and evaluates; writes report.json and report.txt.
nlohmann::json finish_run(Run& run, const std::string& data_state) {
  const TextEncoder encoder = make_encoder(run.task);
  const auto learner = torch_learner(run);
  std::vector<LoopObserver*> observers;
  std::unique_ptr<ProfileObserver> profile;
  if (run.dist->is_primary() && run.plan.train.profile) {
    profile = std::make_unique<ProfileObserver>(run);
    observers.push_back(profile.get());
  }
  TeacherNote note(run);
  if (run.teacher) observers.push_back(&note);
  InitNote init_note(run.init_note);
  if (!run.init_note.empty()) observers.push_back(&init_note);
  std::unique_ptr<RestartNote> restarts;
  if (const auto r = restart_from_environment(); r && run.dist->is_primary()) {
    restarts = std::make_unique<RestartNote>(run.dir, r->attempt);
    observers.push_back(restarts.get());
  }
  return train_and_report(run, *learner, encoder, data_state, observers);
}

}  // namespace

nlohmann::json train(const SiftConfig& config, const TrainOptions& options) {
  Run run;
  start_run(run, config, options);  // resolves the config: nothing below reads it
  const RunPlan& plan = run.plan;
  run.task = build_shared_task(plan.data, *run.dist);  // the data's labels and vocabulary
  if (!plan.train.init_from.empty()) {
    take_label_order(run.task.labels, run.task.label_counts, plan.train.init_from);
  }
  check_best_label(plan.train, run.task.labels);
  // The transfer set's files (train.distill.unlabeled) are refused before the run folder.
  for (const auto& t : plan.data.transfer) expand_paths(t.source.patterns, t.source.key);
  write_run_folder(run);
  check_shared_run_folder(*run.dist, run.dir);
  // A restart before the first last.ckpt starts the run again (train_command.cc).
  if (const auto r = restart_from_environment(); r && r->attempt > 0 && run.dist->is_primary()) {
    record_restart(run.dir, *r, 0);
  }
  run.model = create_model(plan.model, plan.train.optimizer, run.task, plan.loss);
  if (!plan.train.init_from.empty()) {
    run.init_note = fine_tune_from(*run.model, plan.train.init_from, run.task.labels);
  } else {
    run.init_note = start_bias_at_unigram(*run.model, plan.data, run.task);
  }
  prepare_training(run);
  return finish_run(run, "");
}

namespace {

// Why a resumed run has nothing left to train and what to change, or "".
std::string nothing_left(const Run& run) {
  const auto& t = run.plan.train;
  const TrainingState& s = run.state;
  const std::string again = "sift train --resume " + run.dir;
  if (t.max_steps > 0 && s.step >= t.max_steps) {
    return fmt::format(
        "{}: nothing left to train: last.ckpt is at step {} and train.max_steps is "
        "{}; to train longer: {} --set train.max_steps=N (N > {}, or 0: no limit)",
        run.dir, s.step, t.max_steps, again, s.step);
  }
  if (s.epoch > t.epochs) {
    return fmt::format(
        "{}: nothing left to train: last.ckpt ends epoch {} and train.epochs is "
        "{}; to train longer: {} --set train.epochs=N (N > {})",
        run.dir, s.epoch - 1, t.epochs, again, s.epoch - 1);
  }
  if (stop_early(run)) {
    return fmt::format(
        "{}: nothing left to train: it stopped early after {} validations "
        "without improvement (train.patience {}); to train longer: {} --set "
        "train.patience=N (N > {}, or 0: off)",
        run.dir, s.bad_validations, t.patience, again, s.bad_validations);
  }
  return "";
}

}  // namespace

nlohmann::json resume(const std::string& run_dir, const std::vector<std::string>& overrides,
                      const TrainOptions& options) {
  refuse_shape_changes(overrides);
  const auto data_changes = data_keys_changed(overrides, options.allow_data_change);
  restore_missing_best(run_dir);  // every rank alike: the same bytes, renamed atomically
  ModelBundle saved = load_run(run_dir, overrides);
  const std::string last_path = run_file(run_dir, kLastCheckpointFile);
  check_run_folder_visible(run_dir, last_path);
  // Read from the file into the model and the optimizer, not first into memory whole.
  const Checkpoint last = load_checkpoint(last_path, {"model", "optimizer"});
  check_run_file_hashes(run_dir, last.meta, last_path);
  Run run;
  start_run(run, saved.config, options);
  run.dir = run_dir;
  if (run.dist->is_primary()) run.lock = std::make_unique<RunFolderLock>(run_dir);
  check_shared_run_folder(*run.dist, run_dir);
  run.task = saved.task;
  run.model = saved.model;  // holds best.ckpt's weights: they are the best so far
  // Unless last.ckpt's are: best.ckpt may be from before the save a crash cut short.
  if (last.meta.value("has_best", false) &&
      last.meta.value("best_step", int64_t{-1}) == last.meta.value("step", int64_t{-2})) {
    run.model->remember_fills(load_model_weights(*run.model, last, last_path));
  }
  restore_counters(run, last, last_path);
  if (const auto r = restart_from_environment(); r && r->attempt > 0 && run.dist->is_primary()) {
    record_restart(run.dir, *r, run.state.step);
  }
  if (const std::string why = nothing_left(run); !why.empty()) {
    if (run.dist->is_primary()) run.file_hashes = run_file_hashes(run.dir);
    repair_best(run, last);
    return {{"run_dir", run.dir}, {"nothing_to_do", why}};
  }
  prepare_training(run);
  const std::string data_state = restore_last(run, last, last_path);
  if (run.dist->is_primary()) {
    run.state.metrics_rows = cut_metrics_back(run.dir, run.state.metrics_rows);
  }
  if (!overrides.empty() && run.dist->is_primary()) {
    write_file_atomically(run_file(run.dir, kConfigFile),
                          dump_config(with_paths_relative_to(run.plan.given, run.dir)));
  }
  if (run.dist->is_primary()) run.file_hashes = run_file_hashes(run.dir);
  repair_best(run, last);
  run.data_changed_on_resume = data_changes;
  return finish_run(run, data_state);
}

}  // namespace sift
