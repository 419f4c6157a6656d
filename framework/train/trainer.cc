#include "framework/train/trainer.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <fnmatch.h>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>

#include <ATen/CPUGeneratorImpl.h>

#include "core/atomic_file.h"
#include "datasets/stopwords.h"
#include "framework/runtime/checkpoint.h"
#include "config/loader.h"
#include "config/validate.h"
#include "framework/train/distributed_training.h"
#include "core/error.h"
#include "framework/runtime/loss.h"
#include "framework/train/max_norm.h"
#include "framework/runtime/model_bundle.h"
#include "framework/train/optimization.h"
#include "framework/train/precision.h"
#include "models/autocast.h"
#include "framework/train/progress.h"
#include "framework/runtime/task.h"

namespace sift {
namespace {

namespace fs = std::filesystem;

std::string default_run_name(const SiftConfig& config) {
  const std::string stem = config.source.empty() ? "run" : fs::path(config.source).stem().string();
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", std::localtime(&now));
  return stem + "-" + stamp;
}

std::string create_run_dir(const SiftConfig& config) {
  const fs::path dir = fs::path(config.run.dir) /
                       (config.run.name.empty() ? default_run_name(config) : config.run.name);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("run.dir: cannot create {}: {}", dir.string(), ec.message()));
  return dir.string();
}

void append_line(const std::string& path, const std::string& line) {
  std::ofstream out(path, std::ios::app);
  out << line << "\n";
  if (!out) throw Error(fmt::format("cannot write {}", path));
}

// Everything one training run holds.
struct Run {
  SiftConfig config;
  TrainOptions options;
  std::string dir;
  Task task;
  Classifier model{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  torch::Device device{torch::kCPU};
  torch::Tensor class_weights;  // undefined: all labels weigh the same
  int64_t step = 0;             // optimizer steps taken
  int64_t epoch = 1;            // the epoch in progress
  int64_t examples_seen = 0;
  double epoch_loss_sum = 0.0;
  int64_t epoch_loss_examples = 0;
  nlohmann::json last_metrics;
  // The best weights so far, kept in memory: writing every improvement to disk would
  // cost more than training small models.
  NamedTensors best_weights;
  nlohmann::json best_metrics;
  double best_value = 0.0;
  bool has_best = false;
  int64_t best_epoch = 0;
  int64_t best_step = -1;
  bool best_saved = true;
  // best.ckpt names last.ckpt's weights instead of holding a copy (they were the same).
  bool best_is_reference = false;
  int64_t bad_validations = 0;  // in a row, for early stopping
  LossScaler scaler;            // train.loss_scaling; disabled by default
  std::shared_ptr<Distributed> dist;  // null: a single process
  double loss_scale = 1.0;            // this rank's share of a batch spread over ranks
  bool data_done = false;             // this rank's training data ended this epoch
};

void remember_best(Run& run, const nlohmann::json& metrics) {
  torch::NoGradGuard no_grad;
  const NamedTensors current = named_tensors(*run.model);
  if (run.best_weights.empty()) {
    for (const auto& [name, w] : current) run.best_weights.emplace_back(name, w.detach().clone());
  } else {
    for (size_t i = 0; i < current.size(); ++i) run.best_weights[i].second.copy_(current[i].second);
  }
  run.best_epoch = run.epoch;
  run.best_step = run.step;
  run.best_metrics = metrics;
  run.best_saved = false;
}

void restore_best(Run& run) {
  if (run.best_weights.empty()) return;
  torch::NoGradGuard no_grad;
  const NamedTensors current = named_tensors(*run.model);
  for (size_t i = 0; i < current.size(); ++i) current[i].second.copy_(run.best_weights[i].second);
}

nlohmann::json checkpoint_meta(const Run& run) {
  return {{"model", run.config.model.type},
          {"num_classes", run.task.labels.size()},
          {"epoch", run.epoch},
          {"step", run.step}};
}

// Writes best.ckpt from the weights in memory when they changed since the last write.
// When they are the weights last.ckpt holds, best.ckpt only names that file: fastText's
// bucket tables are 80 MB, and writing them twice doubled the end of short runs.
void save_best(Run& run, bool same_as_last) {
  if (run.best_saved || run.best_weights.empty()) return;
  if (!is_primary(run.dist.get())) {  // only rank 0 writes
    run.best_saved = true;
    run.best_is_reference = same_as_last;
    return;
  }
  Checkpoint c;
  c.meta = checkpoint_meta(run);
  c.meta["epoch"] = run.best_epoch;
  c.meta["step"] = run.best_step;
  c.meta["metrics"] = run.best_metrics;
  if (same_as_last) {
    c.meta["weights_in"] = "last.ckpt";
  } else {
    c.tensor_blobs["model"] = run.best_weights;
  }
  save_checkpoint(run_file(run.dir, "best.ckpt"), c);
  run.best_saved = true;
  run.best_is_reference = same_as_last;
}

std::string rng_state() {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  const torch::Tensor state = generator.get_state();
  return std::string(static_cast<const char*>(state.data_ptr()), state.numel());
}

void set_rng_state(const std::string& bytes) {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  auto state = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kUInt8);
  std::memcpy(state.data_ptr(), bytes.data(), bytes.size());
  generator.set_state(state);
}

void write_last(Run& run, const ShardedStream& stream, bool epoch_complete);

// last.ckpt: everything a resumed run needs to continue exactly where this one stands.
void save_last(Run& run, const ShardedStream& stream, bool epoch_complete) {
  const bool same = run.best_step == run.step;
  if (run.best_is_reference && !same) {
    // best.ckpt names the last.ckpt about to be replaced: give it its own copy first.
    run.best_saved = false;
    save_best(run, false);
  }
  write_last(run, stream, epoch_complete);
  save_best(run, same);  // after last.ckpt's buffers are gone: one large buffer at a time
}

void write_last(Run& run, const ShardedStream& stream, bool epoch_complete) {
  // Each rank's own position and counters; in a group rank 0 gathers them all.
  std::map<std::string, std::string> mine{
      {"rng", rng_state()},
      {"state", nlohmann::json{{"examples_seen", run.examples_seen},
                               {"epoch_loss_sum", run.epoch_loss_sum},
                               {"epoch_loss_examples", run.epoch_loss_examples}}
                    .dump()}};
  if (!epoch_complete) mine["data"] = stream.save_state();
  auto rank_blobs = gather_rank_blobs(run.dist.get(), mine);
  if (!is_primary(run.dist.get())) return;
  Checkpoint c;
  c.meta = checkpoint_meta(run);
  c.meta["world_size"] = world_size_of(run.dist.get());
  c.meta.update({{"epoch_complete", epoch_complete},
                 {"examples_seen", run.examples_seen},
                 {"train_records", run.task.train_records},
                 {"train_skipped", run.task.train_skipped},
                 {"label_counts", run.task.label_counts},
                 {"epoch_loss_sum", run.epoch_loss_sum},
                 {"epoch_loss_examples", run.epoch_loss_examples},
                 {"has_best", run.has_best},
                 {"best_value", run.best_value},
                 {"best_epoch", run.best_epoch},
                 {"best_step", run.best_step},
                 {"bad_validations", run.bad_validations},
                 {"metrics", run.last_metrics}});
  // Serialised while the file is written (a device's tensors are copied to the CPU).
  c.tensor_blobs["model"] = named_tensors(*run.model);
  c.blobs["optimizer"] = optimizer_bytes(*run.optimizer);
  if (run.scaler.enabled()) c.meta["loss_scaler"] = run.scaler.state();
  for (auto& [name, bytes] : rank_blobs) c.blobs[name] = std::move(bytes);
  save_checkpoint(run_file(run.dir, "last.ckpt"), c);
}

int64_t total_steps_of(const Run& run) {
  const auto& t = run.config.train;
  const int64_t per_batch = t.batch_size * world_size_of(run.dist.get());  // over all ranks
  const int64_t batches =
      (static_cast<int64_t>(run.task.train_records) + per_batch - 1) / per_batch;
  const int64_t total = (batches + t.accumulate - 1) / t.accumulate * t.epochs;
  return t.max_steps > 0 ? std::min(total, t.max_steps) : total;
}

// Whether `value` of train.best_metric beats the best so far by train.min_delta.
bool improves(const Run& run, double value) {
  if (!run.has_best) return true;
  const double delta = run.config.train.min_delta;
  return run.config.train.best_metric == BestMetric::loss ? value < run.best_value - delta
                                                : value > run.best_value + delta;
}

// Validates, keeps the best weights, counts validations without improvement and writes
// metrics.jsonl and a log line.
void validate(Run& run, ShardedStream* valid, Progress& progress, bool end_of_epoch) {
  std::vector<double> loss{run.epoch_loss_sum, static_cast<double>(run.epoch_loss_examples)};
  if (run.dist) run.dist->sum(loss);
  nlohmann::json record = {
      {"epoch", run.epoch},
      {"step", run.step},
      {"end_of_epoch", end_of_epoch},
      {"train_loss", loss[1] > 0 ? loss[0] / loss[1] : 0.0},
      {"seconds", progress.elapsed_seconds()}};
  std::string line = fmt::format("epoch {} step {}: train loss {:.4f}", run.epoch, run.step,
                                 record["train_loss"].get<double>());
  if (valid != nullptr) {
    Evaluation e = evaluate(run.model, *valid, run.task.encoder.kind,
                                  run.task.labels.size(), run.device, label_mode(run.config));
    reduce_evaluation(run.dist.get(), e);
    const nlohmann::json summary = e.summary();
    for (const auto& [key, value] : summary.items()) record["valid_" + key] = value;
    line += ", valid " + e.headline();
    const double value = record["valid_" + to_string(run.config.train.best_metric)].get<double>();
    if (improves(run, value)) {
      run.best_value = value;
      run.has_best = true;
      run.bad_validations = 0;
      remember_best(run, record);
    } else {
      ++run.bad_validations;
    }
  }
  if (run.scaler.enabled()) {
    record["loss_scale"] = run.scaler.scale();
    record["skipped_steps"] = run.scaler.skipped_steps();
  }
  if (is_primary(run.dist.get())) append_line(run_file(run.dir, "metrics.jsonl"), record.dump());
  progress.log(line);
  run.last_metrics = record;
}

bool stop_early(const Run& run) {
  return run.config.train.patience > 0 && run.bad_validations >= run.config.train.patience;
}

// One batch's forward and backward; returns its mean loss per example.
double accumulate_batch(Run& run, const RawBatch& batch) {
  if (batch.size() == 0) return 0.0;  // a rank out of data: it adds zero gradients
  const auto& t = run.config.train;
  torch::Tensor logits;
  {
    AutocastGuard autocast(t.precision, run.device);
    logits = run.model->forward(to_input(batch, run.task.encoder.kind, run.device));
  }
  logits = logits.to(torch::kFloat32);  // the loss in fp32, whatever autocast produced
  auto loss = batch_loss(logits, batch, loss_options(run.config, run.class_weights));
  const torch::Tensor scaled = run.scaler.scale_loss(run.loss_scale != 1.0 ? loss * run.loss_scale : loss);
  (t.accumulate > 1 ? scaled / static_cast<double>(t.accumulate) : scaled).backward();
  return loss.item<double>() / (t.loss_reduction == LossReduction::sum ? batch.size() : 1);
}

// A step whose gradients overflowed under loss scaling is skipped (the weights stay) but
// still counts, so that step limits, schedules and evaluation points do not shift.
void optimizer_step(Run& run) {
  if (run.dist) run.dist->average_gradients(*run.model);
  const bool finite = run.scaler.unscale(run.model->parameters());
  run.scaler.update(finite);
  if (finite) {
    if (run.config.train.clip_norm > 0) {
      torch::nn::utils::clip_grad_norm_(run.model->parameters(), run.config.train.clip_norm);
    }
    run.optimizer->step();
    if (run.config.train.max_norm > 0) apply_max_norm(*run.model, run.config.train.max_norm);
  }
  run.optimizer->zero_grad();
  ++run.step;
}

// The next batch. In a group: true while any rank has one (a rank out of data gets an
// empty batch), and the loss scale that makes the averaged gradient that of all ranks'
// examples together, as one process with the whole batch would compute it.
bool next_batch(Run& run, ShardedStream& stream, RawBatch& batch) {
  const bool has = !run.data_done && stream.next(batch);
  if (!has) {
    run.data_done = true;
    batch.clear();
  }
  if (!run.dist) return has;
  const BatchAgreement all = run.dist->agree_on_batch(has, batch.size());
  run.loss_scale = rank_loss_scale(run.config.train.loss_reduction, batch.size(), all.examples,
                                   run.dist->world_size());
  return all.any;
}

// Whether a periodic save is due; in a group rank 0's clock decides for all, as a save
// gathers every rank's data position.
bool save_due(Run& run, std::chrono::steady_clock::time_point last,
              std::chrono::duration<double> interval) {
  const bool due = std::chrono::steady_clock::now() - last >= interval;
  return run.dist ? run.dist->primary_says(due) : due;
}

nlohmann::json train_epochs(Run& run, const TextEncoder& encoder, const std::string& data_state) {
  const auto& t = run.config.train;
  const int64_t rank = run.dist ? run.dist->rank() : 0, world = world_size_of(run.dist.get());
  auto batches = open_stream(run.config, "train", encoder, run.task.labels, true, rank, world);
  auto valid = open_stream(run.config, "valid", encoder, run.task.labels, false, rank, world);
  // The schedule's horizon; with data.max_tokens batches are cut by size, so it is an
  // estimate, and epochs end when the data does, not at a step count.
  const int64_t total_steps = total_steps_of(run);
  const int64_t step_limit = t.max_steps > 0 ? t.max_steps : std::numeric_limits<int64_t>::max();
  Progress progress(total_steps, t.log_every, run.options.quiet);
  const auto save_interval = std::chrono::duration<double>(t.checkpoint_minutes * 60.0);
  auto last_save = std::chrono::steady_clock::now();
  const int64_t first_step = run.step;
  bool resume_mid_epoch = !data_state.empty();
  if (resume_mid_epoch) batches->restore_state(data_state);
  run.model->train();
  run.optimizer->zero_grad();
  RawBatch batch;
  bool stopped = false;
  for (; run.epoch <= t.epochs && run.step < step_limit && !stopped; ++run.epoch) {
    if (!resume_mid_epoch) {
      batches->start_epoch(static_cast<uint64_t>(run.epoch));
      run.epoch_loss_sum = 0.0;
      run.epoch_loss_examples = 0;
    }
    resume_mid_epoch = false;
    run.data_done = false;
    int64_t micro = 0;  // batches accumulated since the last optimizer step
    bool more = true;
    while (run.step < step_limit && (more = next_batch(run, *batches, batch))) {
      const double lr = scheduled_lr(t, run.step, total_steps);
      set_lr(*run.optimizer, lr);
      const double loss = accumulate_batch(run, batch);
      run.examples_seen += batch.size();
      run.epoch_loss_sum += loss * batch.size();
      run.epoch_loss_examples += batch.size();
      if (++micro < t.accumulate) continue;
      micro = 0;
      optimizer_step(run);
      progress.update(run.step, run.epoch, run.examples_seen, loss, lr);
      if (t.eval_every > 0 && run.step % t.eval_every == 0) {
        validate(run, valid.get(), progress, false);
        run.model->train();
        if ((stopped = stop_early(run))) break;
      }
      // Checkpoints fall between optimizer steps, so a resume never splits an accumulation.
      if (save_due(run, last_save, save_interval)) {
        save_last(run, *batches, false);
        last_save = std::chrono::steady_clock::now();
      }
    }
    if (micro > 0) optimizer_step(run);  // the epoch's last, partial accumulation
    // A step limit or early stop inside an epoch: save where the data stands, so that a
    // resume continues exactly.
    if (stopped || (more && run.step >= step_limit)) {
      save_last(run, *batches, false);
      break;
    }
    if (t.eval_every == 0) validate(run, valid.get(), progress, true);
    stopped = stop_early(run);
    run.model->train();
    // Not every epoch: fastText-sized tables are 80 MB, and on a busy disk writing them
    // each epoch took longer than training (measured: 50 s wall for 4 s of CPU).
    const bool last_epoch = run.epoch == t.epochs || run.step >= step_limit || stopped;
    if (last_epoch || save_due(run, last_save, save_interval)) {
      save_last(run, *batches, true);
      last_save = std::chrono::steady_clock::now();
    }
  }
  progress.finish_line();
  if (stopped) progress.log(fmt::format("stopped early: no improvement of valid {} in {} validations", to_string(t.best_metric), t.patience));
  if (run.scaler.skipped_steps() > 0) {
    progress.log(fmt::format("loss scaling skipped {} steps with inf/nan gradients (scale now {})",
                             run.scaler.skipped_steps(), run.scaler.scale()));
  }
  const double seconds = progress.elapsed_seconds();
  const int64_t steps = run.step - first_step;
  std::vector<int64_t> examples{run.examples_seen};  // over all ranks
  if (run.dist) run.dist->sum(examples);
  nlohmann::json report = {
          {"steps", run.step},
          {"examples", examples[0]},
          {"seconds", seconds},
          {"examples_per_second",
           seconds > 0 ? static_cast<double>(steps * t.accumulate * t.batch_size * world) / seconds
                       : 0.0},
          {"records", run.task.train_records},
          {"skipped_records", run.task.train_skipped},
          {"workers", run.config.data.workers},
          {"stopped_early", stopped},
          {"precision", to_string(t.precision)},
          {"checkpointing", to_string(t.gradient_checkpointing)},
          {"skipped_steps", run.scaler.skipped_steps()},
          {"best_epoch", run.best_epoch}};
  if (run.dist) {
    report["world_size"] = world;
    report["allreduce_seconds"] = run.dist->gradient_seconds();
    report["allreduce_calls"] = run.dist->gradient_calls();
  }
  return report;
}

// Evaluates the best weights on the validation and test splits.
nlohmann::json final_evaluation(Run& run, const TextEncoder& encoder, std::string& text_report) {
  nlohmann::json splits = nlohmann::json::object();
  restore_best(run);
  for (const std::string name : {"valid", "test"}) {
    auto stream = open_stream(run.config, name, encoder, run.task.labels, false,
                              run.dist ? run.dist->rank() : 0, world_size_of(run.dist.get()));
    if (!stream) continue;
    Evaluation e = evaluate(run.model, *stream, run.task.encoder.kind, run.task.labels.size(),
                            run.device, label_mode(run.config));
    reduce_evaluation(run.dist.get(), e);
    if (e.examples() == 0) throw Error(empty_split_message(name, *stream));
    std::vector<int64_t> skipped{static_cast<int64_t>(stream->skipped())};
    if (run.dist) run.dist->sum(skipped);
    splits[name] = e.to_json(run.task.labels.names());
    splits[name]["loss"] = e.loss;
    splits[name]["skipped_records"] = skipped[0];
    text_report += fmt::format("== {} ==\n{}\n", name, e.to_text(run.task.labels.names()));
  }
  return splits;
}

}  // namespace

void apply_threads(int64_t threads) {
  const int n = threads > 0 ? static_cast<int>(threads)
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(n);
}

void validate_for_training(const SiftConfig& config) { validate(config, model_traits()); }

namespace {

// Trains from where `run` stands and evaluates; writes report.json and report.txt.
nlohmann::json finish_run(Run& run, const std::string& data_state) {
  const TextEncoder encoder = make_encoder(run.task);
  nlohmann::json report;
  report["run_dir"] = run.dir;
  report["train"] = train_epochs(run, encoder, data_state);
  report["train"]["vocabulary"] = run.task.vocab->size();
  report["labels"] = run.task.labels.names();
  std::string text = fmt::format("Run {}\n\n", run.dir);
  report["splits"] = final_evaluation(run, encoder, text);
  if (!is_primary(run.dist.get())) return report;
  write_file_atomically(run_file(run.dir, "report.json"), report.dump(2) + "\n");
  write_file_atomically(run_file(run.dir, "report.txt"), text);
  return report;
}

void start_run(Run& run, const SiftConfig& config, const TrainOptions& options) {
  validate_for_training(config);
  apply_threads(config.run.threads);
  run.dist = join_for_training(config);
  // Rank 0 initialises as a single process would (its weights are broadcast); the other
  // ranks draw other dropout masks.
  const int64_t rank = run.dist ? run.dist->rank() : 0;
  torch::manual_seed(static_cast<uint64_t>(config.run.seed + rank));
  run.config = config;
  run.options = options;
  run.options.quiet = options.quiet || !is_primary(run.dist.get());
  run.device = parse_device(config.run.device);
}

// train.init_from: a checkpoint file, or a run folder's best (else last) checkpoint.
void init_from(torch::nn::Module& model, const std::string& from) {
  std::string path = from;
  const Checkpoint c = fs::is_directory(from) ? load_run_weights(from, &path)
                                              : load_checkpoint(from, {"model"});
  load_model_weights(model, c, path);
}

// train.freeze: parameters whose names match a pattern stop learning.
void freeze(torch::nn::Module& model, const std::vector<std::string>& patterns) {
  for (const auto& pattern : patterns) {
    bool matched = false;
    std::vector<std::string> names;
    for (auto& p : model.named_parameters()) {
      names.push_back(p.key());
      if (fnmatch(pattern.c_str(), p.key().c_str(), 0) != 0) continue;
      p.value().set_requires_grad(false);
      matched = true;
    }
    if (!matched) {
      throw Error(fmt::format("train.freeze: '{}' matches no parameter (the model has: {})",
                              pattern, fmt::join(names, ", ")));
    }
  }
}

// train.class_weights: explicit numbers, or "balanced" (n / (classes x count)).
torch::Tensor class_weights(const TrainConfig& t, const Task& task, bool multi_label) {
  if (t.class_weights.empty()) return {};
  const int64_t classes = task.labels.size();
  std::vector<float> w;
  const bool balanced = t.class_weights.size() == 1 && t.class_weights[0] == "balanced";
  if (balanced && multi_label) return balanced_pos_weight(task.label_counts, task.train_records);
  if (balanced) {
    uint64_t total = 0;
    for (auto c : task.label_counts) total += c;
    for (int64_t k = 0; k < classes; ++k) {
      const uint64_t count = k < static_cast<int64_t>(task.label_counts.size()) ? task.label_counts[k] : 0;
      w.push_back(count == 0 ? 0.0f : static_cast<float>(total) / (classes * count));
    }
  } else {
    if (static_cast<int64_t>(t.class_weights.size()) != classes) {
      throw Error(fmt::format("train.class_weights: The {} weights must be one per label ({}: {}).",
                              t.class_weights.size(), classes,
                              fmt::join(task.labels.names(), ", ")));
    }
    for (const auto& v : t.class_weights) {
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(x >= 0)) {
        throw Error(fmt::format("train.class_weights: '{}' is not a weight >= 0", v));
      }
      w.push_back(static_cast<float>(x));
    }
  }
  return torch::tensor(w);
}

void prepare_training(Run& run) {
  freeze(*run.model, run.config.train.freeze);
  run.model->to(run.device);
  if (run.dist) run.dist->broadcast_parameters(*run.model);
  const torch::Tensor w = class_weights(run.config.train, run.task, run.config.data.multi_label);
  if (w.defined()) run.class_weights = w.to(run.device);
  run.optimizer = create_optimizer(run.config.train, run.model->parameters());
  run.model->set_recompute(
      recompute_policy(run.config.train.gradient_checkpointing,
                       run.config.train.gradient_checkpointing_every));
  run.scaler = make_loss_scaler(run.config.train);
}

// Options a resumed run may not change: they fix the saved model's shape or inputs.
void refuse_shape_changes(const std::vector<std::string>& overrides) {
  for (const auto& o : overrides) {
    const std::string key = o.substr(0, o.find('='));
    if (key.rfind("model.", 0) == 0 || key.rfind("tokenizer.", 0) == 0 || key == "data.labels" ||
        key == "data.multi_label") {
      throw Error(fmt::format("--set {}: a resumed run cannot change '{}', which fixes the saved "
                              "model's shape or inputs; start a new run instead",
                              key, key));
    }
  }
}

}  // namespace

nlohmann::json train(const SiftConfig& config, const TrainOptions& options) {
  check_model_options(config);  // a resumed run's saved config lists every option
  Run run;
  start_run(run, config, options);
  run.task = build_shared_task(config, run.dist.get());  // create the data
  run.dir = on_primary(run.dist.get(), "run_dir", [&] { return create_run_dir(config); });
  if (is_primary(run.dist.get())) {
    write_file_atomically(run_file(run.dir, "config.yaml"), dump_config(config));
    run.task.labels.save(run_file(run.dir, "labels.txt"));
    run.task.vocab->save(run_file(run.dir, "vocab.txt"));
    if (run.task.pieces) {
      copy_file_atomically(config.tokenizer.model, run_file(run.dir, "tokenizer.model"));
    }
    const auto& stopwords = run.task.encoder.tokenizer.stopwords;
    if (!stopwords.empty()) save_stopwords(run_file(run.dir, kStopwordsFile), stopwords);
    std::remove(run_file(run.dir, "metrics.jsonl").c_str());
    std::remove(run_file(run.dir, "best.ckpt").c_str());
  }
  run.model = create_model(config, run.task);  // create the model
  if (!config.train.init_from.empty()) init_from(*run.model, config.train.init_from);
  prepare_training(run);  // freezing, class weights and the optimizer
  return finish_run(run, "");
}

nlohmann::json resume(const std::string& run_dir, const std::vector<std::string>& overrides,
                      const TrainOptions& options) {
  refuse_shape_changes(overrides);
  ModelBundle saved = load_run(run_dir, overrides);
  const std::string last_path = run_file(run_dir, "last.ckpt");
  const Checkpoint last = load_checkpoint(last_path, {"model"});  // read into the model
  if (!last.on_disk.count("model")) throw Error(fmt::format("{} holds no model state", last_path));
  for (const char* blob : {"optimizer", "rng"}) {
    if (!last.blobs.count(blob)) throw Error(fmt::format("{} holds no {} state", last_path, blob));
  }
  const auto& meta = last.meta;
  Run run;
  start_run(run, saved.config, options);
  check_world_size(meta, last_path, world_size_of(run.dist.get()));
  const int64_t rank = run.dist ? run.dist->rank() : 0;
  auto rank_blob_of = [&](const std::string& name) -> const std::string& {
    auto it = last.blobs.find(rank_blob(name, rank));
    if (it == last.blobs.end()) throw Error(fmt::format("{} holds no {} of rank {}", last_path, name, rank));
    return it->second;
  };
  // Rank 0's counters are in the metadata; each other rank's in its own blob.
  const nlohmann::json mine = rank == 0 ? meta : nlohmann::json::parse(rank_blob_of("state"));
  run.dir = run_dir;
  run.task = saved.task;
  run.task.train_records = meta.value("train_records", uint64_t{0});
  run.task.train_skipped = meta.value("train_skipped", uint64_t{0});
  run.task.label_counts = meta.value("label_counts", std::vector<uint64_t>{});
  run.model = saved.model;  // holds best.ckpt's weights: they are the best so far
  run.has_best = meta.value("has_best", false);
  if (run.has_best) remember_best(run, nlohmann::json());
  run.best_saved = true;
  run.best_value = meta.value("best_value", 0.0);
  run.best_epoch = meta.value("best_epoch", int64_t{0});
  run.best_step = meta.value("best_step", int64_t{-1});
  run.best_is_reference = run.has_best && run.best_step == meta.value("step", int64_t{0});
  run.bad_validations = meta.value("bad_validations", int64_t{0});
  load_model_weights(*run.model, last, last_path);
  prepare_training(run);
  load_optimizer_bytes(*run.optimizer, last.blobs.at("optimizer"), last_path);
  set_rng_state(rank_blob_of("rng"));
  if (meta.contains("loss_scaler")) run.scaler.load_state(meta.at("loss_scaler"));
  run.step = meta.value("step", int64_t{0});
  run.examples_seen = mine.value("examples_seen", int64_t{0});
  run.epoch = meta.value("epoch", int64_t{1});
  run.last_metrics = meta.value("metrics", nlohmann::json());
  std::string data_state;
  if (meta.value("epoch_complete", true)) {
    ++run.epoch;
  } else {
    const std::string key = rank_blob("data", rank);
    data_state = last.blobs.count(key) ? last.blobs.at(key) : "";
    if (data_state.empty()) throw Error(fmt::format("{} holds no data position", last_path));
    run.epoch_loss_sum = mine.value("epoch_loss_sum", 0.0);
    run.epoch_loss_examples = mine.value("epoch_loss_examples", int64_t{0});
  }
  if (!overrides.empty() && is_primary(run.dist.get())) {
    write_file_atomically(run_file(run.dir, "config.yaml"), dump_config(run.config));
  }
  return finish_run(run, data_state);
}

}  // namespace sift
