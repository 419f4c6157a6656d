#include "framework/train/trainer.h"

#include <fmt/format.h>
#include <torch/version.h>

#include <chrono>
#include <cmath>
#include <csignal>

#include "config/loader.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "datasets/paths.h"
#include "framework/runtime/checkpoint.h"
#include "framework/runtime/evaluation.h"
#include "framework/runtime/model_bundle.h"
#include "framework/runtime/run_folder.h"
#include "framework/runtime/task.h"
#include "framework/train/distill.h"
#include "framework/train/distributed_training.h"
#include "framework/train/epoch_loop.h"
#include "framework/train/fast_path.h"
#include "framework/train/optimization.h"
#include "framework/train/profiler.h"
#include "framework/train/progress.h"
#include "framework/train/report_html.h"
#include "framework/train/run.h"
#include "framework/train/run_report.h"
#include "framework/train/saving.h"
#include "framework/train/setup.h"
#include "framework/train/step.h"
#include "framework/train/validation.h"

namespace sift {
namespace {

// What the epoch loop works with besides the run.
struct Loop : EpochLoop {
  std::unique_ptr<StepProfiler> profiler;  // train.profile, on rank 0
};

void profile(Loop& loop, int64_t step) {
  if (loop.profiler) loop.profiler->before_step(step);
}

// Whether a periodic save is due; in a group rank 0's clock decides for all, as a save
// gathers every rank's data position.
bool save_due(Run& run, const Loop& loop) { return run.dist->primary_says(loop.save_due()); }

void save(Run& run, Loop& loop, bool epoch_complete) {
  loop.save(run.phases, [&] { save_last(run, *loop.batches, epoch_complete); });
}

// The model's bytes in a checkpoint: what SavePolicy estimates the first save from.
int64_t state_bytes(const torch::nn::Module& model) {
  int64_t bytes = 0;
  for (const auto& named : named_tensors(model)) bytes += named.second.nbytes();
  return bytes;
}

// The signal a stop was asked with (TrainOptions::stop_signal), 0 for none. In a group
// rank 0's flag decides for all, as the save that follows gathers every rank's state.
int stop_signal(Run& run) {
  const int mine = run.options.requested_stop();
  if (!run.dist->primary_says(mine != 0)) return 0;
  return mine != 0 ? mine : SIGTERM;
}

void log_step(Run& run, double lr) {
  run.step_log.train_row({run.state.step, run.state.epoch, lr, run.grad_norm,
                          run.scaler.enabled() ? run.scaler.scale() : std::nan("")});
}

// The next batch; a data error (a shard changed or gone, a bad record) is the data's, not
// the weights': last.ckpt is saved where the run stands, as a SIGTERM saves (a shard that
// disappeared lost the run's last seconds, issue #42), unless an accumulation is half done
// or ranks would have to agree on it.
bool next_batch_or_save(Run& run, Loop& loop, RawBatch& batch, int64_t micro) {
  try {
    return next_batch(run, *loop.batches, batch);
  } catch (const Interrupted&) {
    throw;
  } catch (const Error& e) {
    bool saved = micro == 0 && run.dist->world_size() == 1;
    try {
      if (saved) save(run, loop, false);
    } catch (const Error&) {
      saved = false;
    }
    throw data_error_at(e.what(), saved, run.state.step, run.state.epoch, run.dir);
  }
}

// The steps of one epoch (or what is left of it). Returns whether data remains.
bool run_steps(Run& run, Loop& loop, Progress& progress) {
  const auto& t = run.plan.train;
  TrainingState& s = run.state;
  RawBatch batch;
  int64_t micro = 0;  // batches accumulated since the last optimizer step
  bool more = true;
  profile(loop, s.step);
  while (s.step < loop.step_limit && (more = next_batch_or_save(run, loop, batch, micro))) {
    const double lr = scheduled_lr(t, s.step, loop.total_steps);
    double loss = 0.0;
    if (run.fused) {
      loss = fused_step(run, batch, lr);
    } else {
      set_lr(*run.optimizer, lr);
      loss = accumulate_batch(run, batch);
    }
    run.step_log.count(batch.size(), static_cast<int64_t>(batch.ids.size()), loss);
    s.examples_seen += batch.size();
    s.epoch_loss_sum += loss * batch.size();
    s.epoch_loss_examples += batch.size();
    if (run.fused) {
      run.log_this_step = s.step % progress.log_every() == 0;  // fused_step counted it
      run.grad_norm = std::nan("");                            // not computed there
    } else {
      if (++micro < t.accumulate) continue;
      micro = 0;
      run.log_this_step = (s.step + 1) % progress.log_every() == 0;
      optimizer_step(run);
    }
    if (run.log_this_step) log_step(run, lr);
    if (run.teacher) {
      progress.set_note(
          teacher_note(run.phases.seconds(Phase::teacher), progress.elapsed_seconds()));
    }
    progress.update(s.step, s.epoch, s.examples_seen, loss, lr);
    if (t.eval_every > 0 && s.step % t.eval_every == 0) {
      validate(run, loop.valid.get(), progress, false);
      run.model->train();
      if ((loop.stopped = stop_early(run))) break;
      keep_best_weights(run);  // training goes on
    }
    // Checkpoints fall between optimizer steps, so a resume never splits an accumulation.
    const int stop = stop_signal(run);
    if (stop != 0 || save_due(run, loop)) save(run, loop, false);
    if (stop != 0) throw interrupted_at(stop, run.state.step, run.state.epoch, run.dir);
    profile(loop, s.step);
  }
  run.log_this_step = false;
  if (micro > 0) optimizer_step(run);  // the epoch's last, partial accumulation
  return more;
}

// One epoch, its validation and its save. Returns false when training ends inside it.
bool run_epoch(Run& run, Loop& loop, Progress& progress, bool resume_mid_epoch) {
  const auto& t = run.plan.train;
  TrainingState& s = run.state;
  const bool hogwild = trains_hogwild(run);  // its threads open streams of their own
  if (!resume_mid_epoch) {
    if (!hogwild) loop.batches->start_epoch(static_cast<uint64_t>(s.epoch));
    s.epoch_loss_sum = 0.0;
    s.epoch_loss_examples = 0;
  }
  run.data_done = false;
  keep_best_weights(run);
  const bool more =
      hogwild ? hogwild_steps(run, {loop.encoder, loop.total_steps, loop.step_limit}, progress)
              : run_steps(run, loop, progress);
  // A step limit or early stop inside an epoch: save where the data stands, so that a
  // resume continues exactly (Hogwild threads have no one position: saved as the epoch's
  // end, hogwild.h).
  if (loop.stopped || (more && s.step >= loop.step_limit)) {
    save(run, loop, hogwild);
    return false;
  }
  if (t.eval_every == 0) validate(run, loop.valid.get(), progress, true);
  loop.stopped = stop_early(run);
  run.model->train();
  // train.save_last: end and auto skip epochs' saves: fastText-sized tables are 80 MB, and
  // on a busy disk writing them each epoch took longer than training (measured: 50 s wall
  // for 4 s of CPU).
  const bool last_epoch = s.epoch == t.epochs || s.step >= loop.step_limit || loop.stopped;
  // save_due first: the log's "not saved" line is for an epoch end that really does not.
  // train.save_last at an epoch's end: rank 0's clock decides for a group.
  if (last_epoch || save_due(run, loop) ||
      loop.epoch_end_saves(t.save_last, progress,
                           [&run](bool saves) { return run.dist->primary_says(saves); })) {
    save(run, loop, true);
  }
  return true;
}

nlohmann::json train_summary(Run& run, const Loop& loop, double seconds) {
  const int64_t world = run.dist->world_size();
  std::vector<int64_t> examples{run.state.examples_seen};  // over all ranks
  run.dist->sum(examples);
  nlohmann::json report =
      train_summary(run.state, run.task, run.plan.train, loop,
                    {seconds, examples[0], world, run.plan.data.train_stream.workers,
                     run.training_path, run.scaler.skipped_steps()});
  if (run.dist->is_group()) {
    report["world_size"] = world;
    report["allreduce_seconds"] = run.dist->gradient_seconds();
    report["allreduce_calls"] = run.dist->gradient_calls();
  }
  return report;
}

void log_ending(const Run& run, const Loop& loop, Progress& progress) {
  const auto& t = run.plan.train;
  progress.finish_line();
  for (const auto& line : ending_lines(t, loop.stopped, run.state.skipped_batches)) {
    progress.log(line);
  }
  if (run.scaler.skipped_steps() > 0) {
    progress.log(fmt::format("loss scaling skipped {} steps with inf/nan gradients (scale now {})",
                             run.scaler.skipped_steps(), run.scaler.scale()));
  }
}

// report.json's "profile": where the trace is, or why there is none.
nlohmann::json profile_summary(const Run& run, const Loop& loop, Progress& progress) {
  nlohmann::json j = loop.profiler->to_json();
  if (j.is_null()) {
    progress.log(
        fmt::format("train.profile: nothing recorded: the run ended at step {}, before "
                    "train.profile_from ({})",
                    run.state.step, run.plan.train.profile_from));
  } else {
    progress.log(fmt::format("train.profile: steps {} to {} traced in {}",
                             j["first_step"].get<int64_t>(),
                             j["first_step"].get<int64_t>() + j["steps"].get<int64_t>() - 1,
                             run_file(run.dir, j["trace"].get<std::string>())));
  }
  return j;
}

// Opens the streams of distillation's transfer set, each at its saved position on resume
// (run.transfer_states) or at the start of its first epoch.
void open_transfer(Run& run, const TextEncoder& encoder) {
  run.transfer.clear();
  for (const auto& source : run.plan.data.transfer) {
    TransferStream t{source.name,
                     open_transfer_stream(source, encoder, run.task.labels, run.teacher->encoder,
                                          run.dist->rank(), run.dist->world_size())};
    const auto saved = run.transfer_states.find(source.name);
    if (saved != run.transfer_states.end()) {
      try {
        t.stream->restore_state(saved->second);
      } catch (const Error& e) {  // "shard x is missing since the checkpoint; ..."
        throw Error(fmt::format("{}: {}", source.source.key, e.what()));
      }
    } else {
      t.stream->start_epoch(1);
    }
    run.transfer.push_back(std::move(t));
  }
}

int64_t transfer_rows(const Run& run, const std::string& name) {
  for (const auto& source : run.plan.data.transfer) {
    if (source.name == name) return source.stream.batch_size;
  }
  return 0;
}

// The epoch loop, from where `run` stands (`data_state`: a mid-epoch data position).
nlohmann::json train_epochs(Run& run, const TextEncoder& encoder, const std::string& data_state) {
  const auto& t = run.plan.train;
  const int64_t rank = run.dist->rank(), world = run.dist->world_size();
  Loop loop;
  loop.encoder = &encoder;
  loop.batches = open_stream(run.plan.data, Split::train, encoder, run.task.labels, true, rank,
                             world, run.teacher ? &run.teacher->encoder : nullptr);
  loop.valid =
      open_stream(run.plan.data, Split::valid, encoder, run.task.labels, false, rank, world);
  open_transfer(run, encoder);
  // batch_size on every rank
  loop.start(t, total_steps(run.task, t, t.batch_size * world), run.state.step,
             state_bytes(*run.model));
  Progress progress(loop.total_steps, t.log_every, run.options.quiet);
  // A resumed run keeps the rows up to its checkpoint's step and writes on from there.
  const bool primary = run.dist->is_primary();
  if (primary) progress.open_log_file(run_file(run.dir, kTrainLogFile));
  run.step_log.open(primary ? run_file(run.dir, kStepLogFile) : "",
                    validation_columns(run.plan.labels, t.best_metric), run.state.step,
                    primary && t.tensorboard ? run_file(run.dir, kTensorBoardFolder) : "",
                    run.teacher != nullptr);
  if (primary && t.profile) {
    loop.profiler = std::make_unique<StepProfiler>(
        run.dir, ProfileWindow{t.profile_from, t.profile_steps}, run.phases);
  }
  bool resume_mid_epoch = !data_state.empty();
  if (resume_mid_epoch && trains_hogwild(run)) {
    throw Error(fmt::format(
        "train.fast_path_threads: last.ckpt was saved inside epoch {}, a position {} threads "
        "cannot continue from; resume with --set train.fast_path_threads=1",
        run.state.epoch, t.fast_path_threads));
  }
  if (resume_mid_epoch) loop.batches->restore_state(data_state);
  run.model->train();
  run.optimizer->zero_grad();
  for (; run.state.epoch <= t.epochs && run.state.step < loop.step_limit && !loop.stopped;
       ++run.state.epoch) {
    if (!run_epoch(run, loop, progress, resume_mid_epoch)) break;
    resume_mid_epoch = false;
  }
  if (loop.profiler) loop.profiler->finish(run.state.step);
  log_ending(run, loop, progress);
  nlohmann::json summary = train_summary(run, loop, progress.elapsed_seconds());
  for (const auto& transfer : run.transfer) {
    summary["transfer"][transfer.name] = {{"rows_per_batch", transfer_rows(run, transfer.name)},
                                          {"epoch", transfer.stream->epoch()}};
  }
  run.transfer.clear();  // their readers stop here; the encoders they hold are this call's
  if (loop.profiler) summary["profile"] = profile_summary(run, loop, progress);
  // Hogwild threads read for themselves, one reader each (hogwild.cc).
  const bool hogwild = trains_hogwild(run);
  const int64_t trainers = hogwild ? run.plan.train.fast_path_threads : 1;
  const int64_t readers = hogwild ? trainers : run.plan.data.train_stream.workers;
  add_phases(summary, run.phases, progress, run.state.step - loop.first_step, readers, trainers);
  return summary;
}

// Where the run ran: report.json's "environment".
nlohmann::json environment(const Run& run) {
  return run_environment({"sift-main", TORCH_VERSION, run.device.str(), at::get_num_threads(),
                          run.dist->world_size(), run.plan.data.train_stream.workers,
                          run_file(run.dir, kConfigFile)});
}

// Trains from where `run` stands and evaluates; writes report.json and report.txt.
nlohmann::json finish_run(Run& run, const std::string& data_state) {
  const TextEncoder encoder = make_encoder(run.task);
  nlohmann::json report;
  report["run_dir"] = run.dir;
  if (!run.data_changed_on_resume.empty()) {
    report["data_changed_on_resume"] = run.data_changed_on_resume;  // --allow-data-change
  }
  report["train"] = train_epochs(run, encoder, data_state);
  report["train"]["vocabulary"] = run.task.vocab->size();
  if (run.pruner) report["train"]["pruning"] = run.pruner->report();
  report["labels"] = run.task.labels.names();
  std::string text = fmt::format("Run {}\nTraining: {}\n\n", run.dir, run.training_path);
  if (run.pruner) text += run.pruner->report_text();
  report["splits"] = final_evaluation(run, encoder, text);
  if (!run.dist->is_primary()) return report;
  report["environment"] = environment(run);
  std::string profile;
  if (const auto p = report["train"].value("profile", nlohmann::json()); !p.is_null()) {
    profile = fmt::format("profile: {} steps from step {} in {}\n", p["steps"].get<int64_t>(),
                          p["first_step"].get<int64_t>(), p["trace"].get<std::string>());
  }
  write_reports(run.dir, report, text, profile);
  return report;
}

}  // namespace

nlohmann::json train(const SiftConfig& config, const TrainOptions& options) {
  Run run;
  start_run(run, config, options);  // resolves the config: nothing below reads it
  const RunPlan& plan = run.plan;
  run.task = build_shared_task(plan.data, *run.dist);  // the data's labels and vocabulary
  check_best_label(plan.train, run.task.labels);
  // The transfer set's files (train.distill.unlabeled) are refused before the run folder.
  for (const auto& t : plan.data.transfer) expand_paths(t.source.patterns, t.source.key);
  write_run_folder(run);
  run.model = create_model(plan.model, plan.train.optimizer, run.task, plan.loss);
  if (!plan.train.init_from.empty()) init_from(*run.model, plan.train.init_from);
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
  const Checkpoint last = load_checkpoint(last_path, {"model"});  // read into the model
  check_run_file_hashes(run_dir, last.meta, last_path);
  Run run;
  start_run(run, saved.config, options);
  run.dir = run_dir;
  if (run.dist->is_primary()) run.lock = std::make_unique<RunFolderLock>(run_dir);
  run.task = saved.task;
  run.model = saved.model;  // holds best.ckpt's weights: they are the best so far
  // Unless last.ckpt's are: best.ckpt may be from before the save a crash cut short.
  if (last.meta.value("has_best", false) &&
      last.meta.value("best_step", int64_t{-1}) == last.meta.value("step", int64_t{-2})) {
    run.model->remember_fills(load_model_weights(*run.model, last, last_path));
  }
  restore_counters(run, last, last_path);
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
    write_file_atomically(run_file(run.dir, kConfigFile), dump_config(run.plan.given));
  }
  if (run.dist->is_primary()) run.file_hashes = run_file_hashes(run.dir);
  repair_best(run, last);
  run.data_changed_on_resume = data_changes;
  return finish_run(run, data_state);
}

}  // namespace sift
