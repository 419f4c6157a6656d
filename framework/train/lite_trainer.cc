#include "framework/train/lite_trainer.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "config/loader.h"
#include "config/validate.h"
#include "core/append_line.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "framework/runtime/checkpoint_writer.h"
#include "framework/runtime/evaluation_result.h"
#include "framework/runtime/run_folder.h"
#include "framework/runtime/task.h"
#include "framework/train/divergence.h"
#include "framework/train/epoch_loop.h"
#include "framework/train/fast_path_rules.h"
#include "framework/train/hogwild.h"
#include "framework/train/lite_evaluation.h"
#include "framework/train/lite_weights.h"
#include "framework/train/lr_schedule.h"
#include "framework/train/phases.h"
#include "framework/train/progress.h"
#include "framework/train/report_html.h"
#include "framework/train/run_report.h"
#include "framework/train/step_log.h"
#include "framework/train/training_state.h"
#include "framework/train/validation_record.h"
#include "models/traits.h"

namespace sift {
namespace {

// One run: the resolved options, the data, the weights and the loop's counters.
struct LiteRun {
  SiftConfig config;  // as given: written out, not read for options
  DataPlan data;
  TrainConfig train;
  LabelMode labels;
  bool sum = true;  // train.loss_reduction: sum
  TrainOptions options;
  std::string dir;
  std::unique_ptr<RunFolderLock> lock;
  nlohmann::json file_hashes;
  Task task;
  std::unique_ptr<FastTextTables> tables;
  std::unique_ptr<FusedSgd> step;
  TrainingState state;
  BestState best;
  PhaseTimes phases;
  StepLog step_log;
  int64_t nonfinite_in_a_row = 0;
};

std::string lite_path(int64_t threads) {
  return fmt::format("fast path: fused SGD, {} thread{}, without LibTorch (sift-lite)", threads,
                     threads == 1 ? "" : "s");
}

// ---- checkpoints ------------------------------------------------------------------------

// What saving.cc's save_best writes: best.ckpt from the tables, or naming last.ckpt's.
void save_best(LiteRun& run, bool same_as_last) {
  if (run.best.saved || !run.best.in_model) return;
  run.best.on_disk = false;
  run.best.saved = true;
  run.best.is_reference = same_as_last;
  CheckpointParts c;
  c.meta = best_checkpoint_meta(run.config.model.type, run.task.labels.size(), run.state,
                                run.file_hashes, run.best.metrics, same_as_last);
  if (!same_as_last) run.tables->add_to(c);
  write_checkpoint(run_file(run.dir, kBestCheckpointFile), c);
}

// last.ckpt as saving.cc's write_last writes it, without LibTorch's generator state (the
// fast path draws nothing from it) or optimizer state (plain SGD keeps none): a resume
// by sift-main starts both fresh, which changes nothing it computes.
void write_last(LiteRun& run, const ShardedStream& stream, bool epoch_complete) {
  const std::string counters = run.state.rank_counters();
  const std::string data = epoch_complete ? "" : stream.save_state();
  CheckpointParts c;
  c.meta = checkpoint_meta(run.config.model.type, run.task.labels.size(), run.state.epoch,
                           run.state.step);
  c.meta["run_files"] = run.file_hashes;
  c.meta["world_size"] = 1;
  run.state.to_meta(c.meta, epoch_complete);
  task_counts_to_meta(run.task, c.meta);
  run.tables->add_to(c);
  c.blobs["state"] = counters;
  if (!epoch_complete) c.blobs["data"] = data;
  write_checkpoint(run_file(run.dir, kLastCheckpointFile), c);
}

void save_last(LiteRun& run, const ShardedStream& stream, bool epoch_complete) {
  if (!run.tables->all_finite())
    throw diverged_weights(run.state.step, run.state.epoch, "last.ckpt");
  const bool same = run.state.best_step == run.state.step;
  if (run.best.is_reference && !same) {
    run.best.saved = false;
    save_best(run, false);
  }
  write_last(run, stream, epoch_complete);
  save_best(run, same);
}

// Before training changes the tables: best.ckpt gets the best weights they hold.
void keep_best_weights(LiteRun& run) {
  if (!run.best.in_model) return;
  run.best.saved = false;
  save_best(run, false);
  run.best.on_disk = true;
  run.best.in_model = false;
}

void restore_best(LiteRun& run) {
  if (run.best.on_disk) run.tables->load(run_file(run.dir, kBestCheckpointFile));
}

void save(LiteRun& run, EpochLoop& loop, bool epoch_complete) {
  loop.save(run.phases, [&] { save_last(run, *loop.batches, epoch_complete); });
}

// ---- validation ---------------------------------------------------------------------------

// Adds the validation split's metrics to `record`; the tables' weights are the best when
// they improve on it.
void score_validation(LiteRun& run, ShardedStream& valid, nlohmann::json& record,
                      std::string& line) {
  const Evaluation e = lite_evaluate(*run.tables, valid, nullptr);
  const double value = add_valid_metrics(e, run.train, run.task.labels, record, line);
  if (take_if_best(run.train, value, run.state)) run.best.take(run.state, record);
}

// validation.cc's validate: metrics.jsonl's record of the epoch, its metrics.csv row and
// log line.
void validate(LiteRun& run, ShardedStream* valid, Progress& progress) {
  PhaseTimer timer(run.phases, Phase::validation);
  const TrainingState& s = run.state;
  const double examples = static_cast<double>(s.epoch_loss_examples);
  std::string line;
  nlohmann::json record = validation_record(s, examples > 0 ? s.epoch_loss_sum / examples : 0.0,
                                            progress.elapsed_seconds(), true, line);
  if (valid != nullptr) score_validation(run, *valid, record, line);
  append_line(run_file(run.dir, kMetricsFile), record.dump());
  ++run.state.metrics_rows;
  if (valid != nullptr) run.step_log.valid_row(s.step, s.epoch, record);
  progress.log(line);
  run.state.last_metrics = record;
}

// ---- the loop ---------------------------------------------------------------------------

// The fused step with the non-finite guard (nonfinite.h's messages). Returns the batch's
// mean loss per example.
double fused_step(LiteRun& run, const RawBatch& batch, double lr) {
  const double n = static_cast<double>(batch.size());
  PhaseTimer timer(run.phases, Phase::fused);
  const double loss = run.step->gradient(batch, run.sum ? 1.0 : 1.0 / n);
  if (step_applies(std::isfinite(loss), run.train.on_nonfinite, "loss or gradient",
                   run.state.step + 1, run.state.epoch, run.dir, run.state.skipped_batches,
                   run.nonfinite_in_a_row)) {
    run.step->apply(batch, lr);
  }
  ++run.state.step;
  return loss / n;
}

bool next_batch(LiteRun& run, ShardedStream& stream, RawBatch& batch) {
  PhaseTimer timer(run.phases, Phase::data_wait);
  return stream.next(batch);
}

// trainer.cc's next_batch_or_save: a data error saves last.ckpt first.
bool next_batch_or_save(LiteRun& run, EpochLoop& loop, RawBatch& batch) {
  try {
    return next_batch(run, *loop.batches, batch);
  } catch (const Error& e) {
    bool saved = true;
    try {
      save(run, loop, false);
    } catch (const Error&) {
      saved = false;
    }
    throw data_error_at(e.what(), saved, run.state.step, run.state.epoch, run.dir);
  }
}

// trainer.cc's run_steps on the fast path. Returns whether data remains.
bool run_steps(LiteRun& run, EpochLoop& loop, Progress& progress) {
  TrainingState& s = run.state;
  RawBatch batch;
  bool more = true;
  while (s.step < loop.step_limit && (more = next_batch_or_save(run, loop, batch))) {
    const double lr = scheduled_lr(run.train, s.step, loop.total_steps);
    const double loss = fused_step(run, batch, lr);
    run.step_log.count(batch.size(), static_cast<int64_t>(batch.ids.size()), loss);
    s.examples_seen += batch.size();
    s.epoch_loss_sum += loss * batch.size();
    s.epoch_loss_examples += batch.size();
    if (s.step % progress.log_every() == 0) {
      run.step_log.train_row({s.step, s.epoch, lr, std::nan(""), std::nan("")});
    }
    progress.update(s.step, s.epoch, s.examples_seen, loss, lr);
    const int stop = run.options.requested_stop();
    if (stop != 0 || loop.save_due()) save(run, loop, false);
    if (stop != 0) throw interrupted_at(stop, run.state.step, run.state.epoch, run.dir);
  }
  return more;
}

// Hogwild threads (hogwild.h) on the tables: one epoch. Returns whether the step limit
// ended it.
bool hogwild_steps(LiteRun& run, const EpochLoop& loop, Progress& progress) {
  const HogwildRun h{
      run.data,  run.train, run.sum, run.task.labels, [&run] { return bag_sgd(run.tables->bag()); },
      run.state, run.dir};
  return hogwild_epoch(h, {loop.encoder, loop.total_steps, loop.step_limit}, progress);
}

bool run_epoch(LiteRun& run, EpochLoop& loop, Progress& progress) {
  TrainingState& s = run.state;
  const bool hogwild = run.train.fast_path_threads > 1;  // its threads open their streams
  if (!hogwild) loop.batches->start_epoch(static_cast<uint64_t>(s.epoch));
  s.epoch_loss_sum = 0.0;
  s.epoch_loss_examples = 0;
  keep_best_weights(run);
  const bool more = hogwild ? hogwild_steps(run, loop, progress) : run_steps(run, loop, progress);
  // Hogwild threads have no one data position: saved as the epoch's end (hogwild.h).
  if (more && s.step >= loop.step_limit) {
    save(run, loop, hogwild);
    return false;
  }
  validate(run, loop.valid.get(), progress);
  loop.stopped = stops_early(run.train, run.state);
  const bool last_epoch = s.epoch == run.train.epochs || s.step >= loop.step_limit || loop.stopped;
  if (last_epoch || loop.save_due() || loop.epoch_end_saves(run.train.save_last, progress)) {
    save(run, loop, true);
  }
  return true;
}

nlohmann::json train_epochs(LiteRun& run, const TextEncoder& encoder) {
  const auto& t = run.train;
  EpochLoop loop;
  loop.encoder = &encoder;
  loop.batches = open_stream(run.data, Split::train, encoder, run.task.labels, true);
  loop.valid = open_stream(run.data, Split::valid, encoder, run.task.labels, false);
  loop.start(t, total_steps(run.task, t, t.batch_size), 0, run.tables->bytes());
  Progress progress(loop.total_steps, t.log_every, run.options.quiet);
  progress.open_log_file(run_file(run.dir, kTrainLogFile));
  run.step_log.open(run_file(run.dir, kStepLogFile), validation_columns(run.labels, t.best_metric),
                    0);
  for (; run.state.epoch <= t.epochs && run.state.step < loop.step_limit && !loop.stopped;
       ++run.state.epoch) {
    if (!run_epoch(run, loop, progress)) break;
  }
  progress.finish_line();
  for (const auto& line : ending_lines(t, loop.stopped, run.state.skipped_batches)) {
    progress.log(line);
  }
  nlohmann::json summary =
      train_summary(run.state, run.task, t, loop,
                    {progress.elapsed_seconds(), run.state.examples_seen, 1,
                     run.data.train_stream.workers, lite_path(t.fast_path_threads), 0});
  // Hogwild threads read for themselves, one reader each (hogwild.cc).
  const int64_t trainers = t.fast_path_threads;
  const int64_t readers = trainers > 1 ? trainers : run.data.train_stream.workers;
  add_phases(summary, run.phases, progress, run.state.step, readers, trainers);
  return summary;
}

// ---- the end: evaluation and reports ----------------------------------------------------

nlohmann::json final_evaluation(LiteRun& run, const TextEncoder& encoder, std::string& text) {
  nlohmann::json splits = nlohmann::json::object();
  restore_best(run);
  for (const std::string name : {"valid", "test"}) {
    const bool texts = name == "valid" && !run.labels.multi_label;  // as validation.cc
    auto stream = open_stream(run.data, from_string<Split>(name, "split"), encoder, run.task.labels,
                              false, 0, 1, nullptr, texts);
    if (!stream) continue;
    ConfusedExamples confused;
    const Evaluation e = lite_evaluate(*run.tables, *stream, texts ? &confused : nullptr);
    ConfusedExamples all;
    if (texts) all.merge(confused.held(), e.confusion);
    splits[name] = final_split(
        e, name, run.task.labels, *stream, static_cast<int64_t>(stream->skipped()),
        texts ? all.most_confused(e.confusion, run.task.labels.names()) : nlohmann::json(), text);
  }
  return splits;
}

void write_run_folder(LiteRun& run) {
  run.dir = create_run_folder(run.config, run.lock);
  write_run_text(run.dir, run.config, run.task, run.data);
  run.file_hashes = run_file_hashes(run.dir);
}

}  // namespace

std::string lite_refusal(const SiftConfig& config) {
  validate(config, model_traits());
  const TrainConfig& t = config.train;
  if (config.model.type != "fasttext") return "model.type is not fasttext";
  FastPathCase c;
  c.model_type = config.model.type;
  c.fused_step = true;
  c.multi_label = config.data.multi_label;
  c.loss_scaling = t.loss_scaling == LossScaling::dynamic ||
                   (t.loss_scaling == LossScaling::automatic && t.precision == Precision::fp16);
  c.device = config.run.device;
  const char* world = std::getenv("WORLD_SIZE");
  c.distributed = world != nullptr && std::string(world) != "1";
  if (std::string why = fast_path_refusal(t, c); !why.empty()) return why;
  // ns seeds each batch's draws from LibTorch's generator (models/fasttext.h).
  if (t.loss == Loss::ns) return "train.loss ns";
  if (!t.init_from.empty()) return "train.init_from";
  if (t.tensorboard) return "train.tensorboard";
  if (t.profile) return "train.profile";
  if (t.eval_every > 0) return "train.eval_every";
  if (config.tokenizer.type == TokenizerType::sentencepiece) return "tokenizer.type sentencepiece";
  return "";
}

nlohmann::json lite_train(const SiftConfig& config, const TrainOptions& options) {
  LiteRun run;
  run.config = config;
  run.data = resolve_data(config, InputKind::bag);
  run.train = config.train;
  run.labels = label_mode(config);
  run.sum = config.train.loss_reduction == LossReduction::sum;
  run.options = options;
  run.task = build_task(run.data);
  check_best_label(run.train, run.task.labels);
  write_run_folder(run);
  const TextEncoder encoder = make_encoder(run.task);
  run.tables = std::make_unique<FastTextTables>(
      encoder.num_ids(), run.task.labels.size(), config.model.dim,
      static_cast<uint64_t>(config.run.seed), config.train.loss, run.task.label_counts);
  run.step = bag_sgd(run.tables->bag());
  nlohmann::json report;
  report["run_dir"] = run.dir;
  report["train"] = train_epochs(run, encoder);
  report["train"]["vocabulary"] = run.task.vocab->size();
  report["labels"] = run.task.labels.names();
  std::string text =
      fmt::format("Run {}\nTraining: {}\n\n", run.dir, lite_path(run.train.fast_path_threads));
  report["splits"] = final_evaluation(run, encoder, text);
  // Training threads; no LibTorch pool.
  report["environment"] =
      run_environment({"sift-lite", "not loaded", "cpu", run.train.fast_path_threads, 1,
                       run.data.train_stream.workers, run_file(run.dir, kConfigFile)});
  write_reports(run.dir, report, text);
  return report;
}

}  // namespace sift
