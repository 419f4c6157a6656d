#include "framework/train/base/train_loop.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <limits>
#include <thread>

#include "core/append_line.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "framework/train/base/divergence.h"
#include "framework/train/base/hogwild.h"
#include "framework/train/base/lr_schedule.h"
#include "framework/train/base/progress.h"
#include "framework/train/base/run_report.h"
#include "framework/train/base/save_policy.h"
#include "framework/train/base/validation_record.h"

namespace sift {
namespace {

using Clock = std::chrono::steady_clock;

// What the loop works with: the run, its learner and observers, the streams, the step
// horizon and limit, and when last.ckpt is written.
struct Loop {
  Loop(RunCore& r, Learner& l, const std::vector<LoopObserver*>& o)
      : run(r), learner(l), group(l.group()), observers(o) {}
  RunCore& run;
  Learner& learner;
  Group& group;
  const std::vector<LoopObserver*>& observers;
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

  // Whether train.checkpoint_minutes have passed since the last save (or the start); in
  // a group rank 0's clock decides for all, as a save gathers every rank's data position.
  bool save_due() { return group.primary_says(Clock::now() - last_save >= save_interval); }
};

// The optimizer steps of the run: train.epochs over the task's training records,
// `per_batch` records a batch, train.accumulate batches a step, at most train.max_steps.
int64_t total_steps(const Task& task, const TrainConfig& t, int64_t per_batch) {
  const int64_t batches = (static_cast<int64_t>(task.train_records) + per_batch - 1) / per_batch;
  const int64_t total = (batches + t.accumulate - 1) / t.accumulate * t.epochs;
  return t.max_steps > 0 ? std::min(total, t.max_steps) : total;
}

// The limit and save timing of a loop that starts at the run's step.
void start_loop(Loop& l, int64_t per_batch) {
  const TrainConfig& t = l.run.plan.train;
  l.total_steps = total_steps(l.run.task, t, per_batch);
  l.step_limit = t.max_steps > 0 ? t.max_steps : std::numeric_limits<int64_t>::max();
  l.first_step = l.run.state.step;
  l.save_interval = std::chrono::duration<double>(t.checkpoint_minutes * 60.0);
  l.last_save = Clock::now();
  l.saves = SavePolicy(t.save_last, l.learner.bytes());  // estimates the first save
}

// train.save_last at an epoch's end (SavePolicy), as rank 0 decides for a group. The first
// epoch end that does not save says why, once, in the log.
bool epoch_end_saves(Loop& l, Progress& progress) {
  const double trained = std::chrono::duration<double>(Clock::now() - l.last_save).count();
  const bool saves_now = l.group.primary_says(l.saves.saves_at_epoch_end(trained));
  if (!saves_now && l.run.plan.train.save_last == SaveLast::automatic && !l.skipped_save_said) {
    l.skipped_save_said = true;
    progress.log_to_file_only(unsaved_epoch_end(l.saves.save_seconds(), trained));
  }
  return saves_now;
}

// ---- checkpoints ------------------------------------------------------------------------

void write_last(Loop& l, bool epoch_complete) {
  RunCore& run = l.run;
  // Each rank's own position and counters; in a group rank 0 gathers them all.
  run.state.row_window = run.step_log.window();
  std::map<std::string, std::string> mine{{"state", run.state.rank_counters()}};
  if (!epoch_complete) mine["data"] = l.batches->save_state();
  l.learner.add_rank_blobs(mine);
  const auto blobs = gather_rank_blobs(l.group, mine);
  if (!l.group.is_primary()) {
    l.learner.take_part_in_write(Saved::last);
    return;
  }
  nlohmann::json meta =
      checkpoint_meta(run.plan.model.type, run.task.labels.size(), run.state.epoch, run.state.step);
  meta["run_files"] = run.file_hashes;  // checked on load: check_run_file_hashes
  meta["world_size"] = l.group.world_size();
  run.state.to_meta(meta, epoch_complete);
  task_counts_to_meta(run.task, meta);
  l.learner.write(run_file(run.dir, kLastCheckpointFile), meta, blobs, Saved::last);
}

// last.ckpt, then best.ckpt when the best weights changed since it was written.
void save_last(Loop& l, bool epoch_complete) {
  const TrainingState& s = l.run.state;
  // The weights agree over the ranks, so every rank refuses alike and none waits.
  if (!l.learner.weights_finite()) throw diverged_weights(s.step, s.epoch, "last.ckpt");
  const bool same = s.best_step == s.step;
  if (l.run.best.is_reference && !same) {
    // best.ckpt names the last.ckpt about to be replaced: give it its own copy first.
    l.run.best.saved = false;
    save_best(l.run, l.learner, false);
  }
  write_last(l, epoch_complete);
  save_best(l.run, l.learner,
            same);  // after last.ckpt's buffers are gone: one large buffer at a time
}

// Writes last.ckpt, timed as Phase::checkpoint and for SavePolicy.
void save(Loop& l, bool epoch_complete) {
  PhaseTimer timer(l.run.phases, Phase::checkpoint);
  const auto start_time = Clock::now();
  save_last(l, epoch_complete);
  l.last_save = Clock::now();
  l.saves.saved(std::chrono::duration<double>(l.last_save - start_time).count());
}

// Before training changes the weights: the best go to best.ckpt or a copy.
void keep_best_weights(Loop& l) {
  BestState& best = l.run.best;
  if (!best.in_model) return;
  if (l.learner.best_to_disk()) {
    write_best_out(l.run, l.learner);
  } else {
    l.learner.copy_best();
    best.on_disk = false;
  }
  best.in_model = false;
}

// Puts the best weights back into the model (nothing when there are none or it has them).
void restore_best(Loop& l) {
  if (l.run.best.in_model) return;
  if (l.run.best.on_disk) {
    l.learner.load_weights(run_file(l.run.dir, kBestCheckpointFile));
  } else if (l.learner.holds_best_copy()) {
    l.learner.restore_best_copy();
  } else {
    return;  // no best weights
  }
  l.run.best.in_model = true;
}

// ---- validation ---------------------------------------------------------------------------

// Adds the validation split's metrics to `record`; the weights are the best when they
// improve on it.
void score_validation(Loop& l, ShardedStream& valid, nlohmann::json& record, std::string& line) {
  RunCore& run = l.run;
  const Evaluation e = l.learner.evaluate(valid, nullptr);
  if (run.step_log.tensorboard() && !e.multi_label) {
    run.step_log.tensorboard_text("valid_confusion", run.state.step,
                                  e.confusion.to_markdown(run.task.labels.names()));
  }
  const double value = add_valid_metrics(e, run.plan.train, run.task.labels, record, line);
  if (const std::string why = l.learner.not_a_best(run.state.step); !why.empty()) {
    line += why;
    return;
  }
  if (take_if_best(run.plan.train, value, run.state)) run.best.take(run.state, record);
}

// Validates on `valid` (none: only the training loss is recorded): metrics.jsonl's record,
// its metrics.csv row and log line, the best weights and the count for early stopping.
void validate(Loop& l, Progress& progress, bool end_of_epoch) {
  RunCore& run = l.run;
  PhaseTimer timer(run.phases, Phase::validation);
  const TrainingState& s = run.state;
  std::vector<double> loss{s.epoch_loss_sum, static_cast<double>(s.epoch_loss_examples)};
  l.group.sum(loss);
  std::string line;
  nlohmann::json record = validation_record(s, loss[1] > 0 ? loss[0] / loss[1] : 0.0,
                                            progress.elapsed_seconds(), end_of_epoch, line);
  // Before scoring: the record a best validation keeps is then the one last.ckpt keeps
  // as its last metrics, which a resume gives back to best.ckpt (repair_best).
  l.learner.add_to_record(record);
  if (l.valid) score_validation(l, *l.valid, record, line);
  if (l.group.is_primary()) append_line(run_file(run.dir, kMetricsFile), record.dump());
  ++run.state.metrics_rows;
  if (l.valid) run.step_log.valid_row(s.step, s.epoch, record);
  progress.log(line);
  run.state.last_metrics = record;
}

// The validation split's most confused pairs with a few of their texts, each rank's
// texts gathered in rank order on rank 0 (the counts are already summed over ranks).
nlohmann::json most_confused(Loop& l, const ConfusedExamples& mine, const Evaluation& e) {
  const auto blobs = gather_rank_blobs(l.group, {{"confused", mine.held().dump()}});
  ConfusedExamples all;
  for (int64_t r = 0; r < l.group.world_size(); ++r) {
    const auto it = blobs.find(rank_blob("confused", r));
    if (it != blobs.end()) all.merge(nlohmann::json::parse(it->second), e.confusion);
  }
  return all.most_confused(e.confusion, l.run.task.labels.names());
}

// The best weights on the validation and test splits: the report's "splits", and their
// text tables appended to `text`.
nlohmann::json final_evaluation(Loop& l, std::string& text) {
  RunCore& run = l.run;
  nlohmann::json splits = nlohmann::json::object();
  restore_best(l);
  for (const std::string name : {"valid", "test"}) {
    // The report shows a few misclassified validation texts: only that stream carries texts.
    const bool texts = name == "valid" && !run.plan.data.multi_label;
    auto stream =
        open_stream(run.plan.data, from_string<Split>(name, "split"), *l.encoder, run.task.labels,
                    false, l.group.rank(), l.group.world_size(), nullptr, texts);
    if (!stream) continue;
    ConfusedExamples confused;
    const Evaluation e = l.learner.evaluate(*stream, texts ? &confused : nullptr);
    std::vector<int64_t> skipped{static_cast<int64_t>(stream->skipped())};
    l.group.sum(skipped);
    splits[name] = final_split(e, name, run.task.labels, *stream, skipped[0],
                               texts ? most_confused(l, confused, e) : nlohmann::json(), text);
  }
  return splits;
}

// ---- the loop ---------------------------------------------------------------------------

// The signal a stop was asked with (TrainOptions::stop_signal), 0 for none. In a group
// rank 0's flag decides for all, as the save that follows gathers every rank's state.
int stop_signal(Loop& l) {
  const int mine = l.run.options.requested_stop();
  if (!l.group.primary_says(mine != 0)) return 0;
  return mine != 0 ? mine : SIGTERM;
}

// The next batch; a data error (a shard changed or gone, a bad record) is the data's, not
// the weights': last.ckpt is saved where the run stands, as a SIGTERM saves (a shard that
// disappeared lost the run's last seconds, issue #42), unless an accumulation is half done
// or ranks would have to agree on it.
bool next_batch_or_save(Loop& l, RawBatch& batch) {
  try {
    PhaseTimer timer(l.run.phases, Phase::data_wait);
    return l.learner.next_batch(*l.batches, batch);
  } catch (const Interrupted&) {
    throw;
  } catch (const Error& e) {
    bool saved = !l.learner.accumulating() && !l.group.is_group();
    try {
      if (saved) save(l, false);
    } catch (const Error&) {
      saved = false;
    }
    throw data_error_at(e.what(), saved, l.run.state.step, l.run.state.epoch, l.run.dir);
  }
}

void before_step(Loop& l) {
  for (auto* o : l.observers) o->before_step(l.run.state.step);
}

// The steps of one epoch (or what is left of it). Returns whether data remains.
bool run_steps(Loop& l, Progress& progress) {
  RunCore& run = l.run;
  const TrainConfig& t = run.plan.train;
  TrainingState& s = run.state;
  RawBatch batch;
  bool more = true;
  before_step(l);
  while (s.step < l.step_limit && (more = next_batch_or_save(l, batch))) {
    const double lr = scheduled_lr(t, s.step, l.total_steps);
    const bool logs = (s.step + 1) % progress.log_every() == 0;  // the step it completes
    const Learner::Stepped r = l.learner.step(batch, lr, logs);
    run.step_log.count(batch.size(), static_cast<int64_t>(batch.ids.size()), r.loss);
    s.examples_seen += batch.size();
    s.epoch_loss_sum += r.loss * batch.size();
    s.epoch_loss_examples += batch.size();
    if (!r.step) continue;  // accumulated
    if (logs) {
      run.step_log.train_row({s.step, s.epoch, lr, l.learner.grad_norm(), l.learner.loss_scale()});
    }
    for (auto* o : l.observers) o->after_step(progress);
    progress.update(s.step, s.epoch, s.examples_seen, run.step_log.loss_window(s.step), lr);
    if (t.eval_every > 0 && s.step % t.eval_every == 0) {
      validate(l, progress, false);
      if ((l.stopped = stop_early(run))) break;
      keep_best_weights(l);  // training goes on
    }
    // Checkpoints fall between optimizer steps, so a resume never splits an accumulation.
    const int stop = stop_signal(l);
    if (stop != 0 || l.save_due()) save(l, false);
    if (stop != 0) throw interrupted_at(stop, s.step, s.epoch, run.dir);
    before_step(l);
  }
  l.learner.end_steps();
  return more;
}

// Whether the run trains Hogwild-style (fused steps on more than one thread).
bool trains_hogwild(const Loop& l) {
  return l.learner.fused() && l.run.plan.train.fast_path_threads > 1;
}

// One epoch, its validation and its save. Returns false when training ends inside it.
bool run_epoch(Loop& l, Progress& progress, bool resume_mid_epoch) {
  const TrainConfig& t = l.run.plan.train;
  TrainingState& s = l.run.state;
  const bool hogwild = trains_hogwild(l);  // its threads open streams of their own
  if (!resume_mid_epoch) {
    if (!hogwild) l.batches->start_epoch(static_cast<uint64_t>(s.epoch));
    s.epoch_loss_sum = 0.0;
    s.epoch_loss_examples = 0;
  }
  l.learner.start_epoch();
  keep_best_weights(l);
  const bool more = hogwild ? hogwild_epoch(l.run,
                                            {l.encoder, l.total_steps, l.step_limit,
                                             [&l] { return l.learner.make_fused(); }},
                                            progress)
                            : run_steps(l, progress);
  // A step limit or early stop inside an epoch: save where the data stands, so that a
  // resume continues exactly (Hogwild threads have no one position: saved as the epoch's
  // end, hogwild.h).
  if (l.stopped || (more && s.step >= l.step_limit)) {
    save(l, hogwild);
    return false;
  }
  if (t.eval_every == 0) validate(l, progress, true);
  l.stopped = stop_early(l.run);
  // train.save_last: end and auto skip epochs' saves: fastText-sized tables are 80 MB, and
  // on a busy disk writing them each epoch took longer than training (measured: 50 s wall
  // for 4 s of CPU).
  const bool last_epoch = s.epoch == t.epochs || s.step >= l.step_limit || l.stopped;
  // save_due first: the log's "not saved" line is for an epoch end that really does not.
  // train.save_last at an epoch's end: rank 0's clock decides for a group.
  if (last_epoch || l.save_due() || epoch_end_saves(l, progress)) {
    save(l, true);
  }
  return true;
}

// report.json's "train": steps, examples and their rate, records, how the loop ended.
nlohmann::json train_summary(Loop& l, double seconds) {
  const TrainingState& s = l.run.state;
  const TrainConfig& t = l.run.plan.train;
  const Task& task = l.run.task;
  std::vector<int64_t> examples{s.examples_seen};  // over all ranks
  l.group.sum(examples);
  const int64_t steps = s.step - l.first_step;
  const int64_t per_step = t.accumulate * t.batch_size * l.group.world_size();
  const double per_second = seconds > 0 ? static_cast<double>(steps * per_step) / seconds : 0.0;
  return {{"steps", s.step},
          {"examples", examples[0]},
          {"seconds", seconds},
          {"examples_per_second", per_second},
          {"records", task.train_records},
          {"vocabulary_cache", task.vocabulary_cache.empty() ? "off" : task.vocabulary_cache},
          {"skipped_records", task.train_skipped},
          {"empty_texts", task.train_empty_texts},
          {"workers", l.run.plan.data.train_stream.workers},
          {"stopped_early", l.stopped},
          {"precision", to_string(t.precision)},
          {"training_path", l.learner.training_path()},
          {"gradient_checkpointing", to_string(t.gradient_checkpointing)},
          {"skipped_steps", l.learner.skipped_steps()},
          {"skipped_nonfinite_batches", s.skipped_batches},
          {"best_epoch", s.best_epoch}};
}

// The epoch loop, from where the run stands (`data_state`: a mid-epoch data position).
nlohmann::json train_epochs(Loop& l, const std::string& data_state) {
  RunCore& run = l.run;
  const TrainConfig& t = run.plan.train;
  const int64_t rank = l.group.rank(), world = l.group.world_size();
  l.batches = open_stream(run.plan.data, Split::train, *l.encoder, run.task.labels, true, rank,
                          world, l.learner.teacher_encoder());
  l.valid =
      open_stream(run.plan.data, Split::valid, *l.encoder, run.task.labels, false, rank, world);
  l.learner.start(*l.encoder);
  start_loop(l, t.batch_size * world);  // batch_size on every rank
  Progress progress(l.total_steps, t.log_every, run.options.quiet, t.epochs);
  // A resumed run keeps the rows up to its checkpoint's step and writes on from there.
  const bool primary = l.group.is_primary();
  if (primary) progress.open_log_file(run_file(run.dir, kTrainLogFile));
  // Which path trains and on how many threads (run.threads 0: how the cores were split).
  progress.log_to_file_only("training: " + l.learner.training_path());
  run.step_log.open(primary ? run_file(run.dir, kStepLogFile) : "",
                    validation_columns(run.plan.labels, t.best_metric), run.state.step,
                    primary && t.tensorboard ? run_file(run.dir, kTensorBoardFolder) : "",
                    l.learner.teacher_encoder() != nullptr);
  run.step_log.restore_window(run.state.row_window);
  for (auto* o : l.observers) o->start(progress);
  bool resume_mid_epoch = !data_state.empty();
  if (resume_mid_epoch && trains_hogwild(l)) {
    throw Error(fmt::format(
        "train.fast_path_threads: last.ckpt was saved inside epoch {}, a position {} threads "
        "cannot continue from; resume with --set train.fast_path_threads=1",
        run.state.epoch, t.fast_path_threads));
  }
  if (resume_mid_epoch) l.batches->restore_state(data_state);
  for (; run.state.epoch <= t.epochs && run.state.step < l.step_limit && !l.stopped;
       ++run.state.epoch) {
    if (!run_epoch(l, progress, resume_mid_epoch)) break;
    resume_mid_epoch = false;
  }
  for (auto* o : l.observers) o->end(run.state.step);
  progress.finish_line();
  for (const auto& line : ending_lines(t, l.stopped, run.state.skipped_batches)) {
    progress.log(line);
  }
  nlohmann::json summary = train_summary(l, progress.elapsed_seconds());
  l.learner.add_summary(summary, progress);
  for (auto* o : l.observers) o->add_summary(summary, progress);
  // Hogwild threads read for themselves, one reader each (hogwild.cc).
  const bool hogwild = trains_hogwild(l);
  const int64_t trainers = hogwild ? t.fast_path_threads : 1;
  const int64_t readers = hogwild ? trainers : run.plan.data.train_stream.workers;
  summary["phases"] =
      run.phases.to_json(progress.elapsed_seconds(), run.state.step - l.first_step,
                         data_bound_remedy(readers, trainers, std::thread::hardware_concurrency()));
  if (summary["phases"].contains("bottleneck")) {
    progress.log(summary["phases"]["bottleneck"].get<std::string>());
  }
  return summary;
}

}  // namespace

// Writes best.ckpt from the best weights when they changed since the last write. When
// they are the weights last.ckpt holds, best.ckpt is a second name (a hard link) of that
// file: fastText's bucket tables are 80 MB, and writing them twice doubled the end of
// short runs. It stands alone all the same (issue #38: a 1 KB best.ckpt naming last.ckpt's
// weights could not predict from a folder copied without last.ckpt): the next save renames
// a new last.ckpt over the old name.
void save_best(RunCore& run, Learner& learner, bool same_as_last) {
  BestState& best = run.best;
  if (best.saved || (!learner.holds_best_copy() && !best.in_model)) return;
  best.on_disk = false;  // a best in memory is written (and a copy kept) again
  best.saved = true;
  best.is_reference = same_as_last;
  const Saved what = best.in_model ? Saved::best_model : Saved::best_copy;
  if (!learner.group().is_primary()) {  // only rank 0 writes
    if (!same_as_last) learner.take_part_in_write(what);
    return;
  }
  if (same_as_last) {
    link_file_atomically(run_file(run.dir, kLastCheckpointFile),
                         run_file(run.dir, kBestCheckpointFile));
    return;
  }
  learner.write(run_file(run.dir, kBestCheckpointFile),
                best_checkpoint_meta(run.plan.model.type, run.task.labels.size(), run.state,
                                     run.file_hashes, best.metrics),
                {}, what);
}

void write_best_out(RunCore& run, Learner& learner) {
  // Written even when best.ckpt is last.ckpt's file (the same weights), which the next
  // save replaces.
  run.best.saved = false;
  save_best(run, learner, false);
  learner.drop_best_copy();
  run.best.on_disk = true;
}

double fused_sgd_step(FusedSgd& fused, const RawBatch& batch, double lr, RunCore& run,
                      int64_t& in_a_row) {
  const double n = static_cast<double>(batch.size());
  const bool sum = run.plan.train.loss_reduction == LossReduction::sum;
  PhaseTimer timer(run.phases, Phase::fused);
  const double loss = fused.gradient(batch, sum ? 1.0 : 1.0 / n);
  // The step being taken, as the log counts them.
  if (step_applies(std::isfinite(loss), run.plan.train.on_nonfinite, "loss or gradient",
                   run.state.step + 1, run.state.epoch, run.dir, run.state.skipped_batches,
                   in_a_row)) {
    fused.apply(batch, lr);
  }
  ++run.state.step;
  return loss / n;
}

bool stop_early(const RunCore& run) { return stops_early(run.plan.train, run.state); }

nlohmann::json train_and_report(RunCore& run, Learner& learner, const TextEncoder& encoder,
                                const std::string& data_state,
                                const std::vector<LoopObserver*>& observers) {
  Loop l(run, learner, observers);
  l.encoder = &encoder;
  nlohmann::json report;
  report["run_dir"] = run.dir;
  if (!run.data_changed_on_resume.empty()) {
    report["data_changed_on_resume"] = run.data_changed_on_resume;  // --allow-data-change
  }
  report["train"] = train_epochs(l, data_state);
  report["train"]["vocabulary"] = run.task.vocab->size();
  report["labels"] = run.task.labels.names();
  std::string text = fmt::format("Run {}\nTraining: {}\n\n", run.dir, learner.training_path());
  learner.add_report(report["train"], text);
  report["splits"] = final_evaluation(l, text);
  if (!l.group.is_primary()) return report;
  report["environment"] = learner.environment(run.dir);
  std::string profile;
  if (const auto p = report["train"].value("profile", nlohmann::json()); !p.is_null()) {
    profile = fmt::format("profile: {} steps from step {} in {}\n", p["steps"].get<int64_t>(),
                          p["first_step"].get<int64_t>(), p["trace"].get<std::string>());
  }
  write_reports(run.dir, report, text, profile);
  return report;
}

}  // namespace sift
