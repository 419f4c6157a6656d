#include "framework/trainer.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include <ATen/CPUGeneratorImpl.h>

#include "datasets/atomic_file.h"
#include "framework/checkpoint.h"
#include "framework/config/loader.h"
#include "framework/error.h"
#include "framework/model_bundle.h"
#include "framework/progress.h"
#include "framework/task.h"

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

std::unique_ptr<torch::optim::Optimizer> create_optimizer(const SiftConfig& config,
                                                          Classifier& model) {
  const auto& o = config.train.optimizer;
  auto params = model->parameters();
  if (o.type == "adam") {
    return std::make_unique<torch::optim::Adam>(
        params, torch::optim::AdamOptions(o.lr)
                    .betas({o.beta1, o.beta2})
                    .eps(o.eps)
                    .weight_decay(o.weight_decay));
  }
  if (o.type == "adamw") {
    return std::make_unique<torch::optim::AdamW>(
        params, torch::optim::AdamWOptions(o.lr)
                    .betas({o.beta1, o.beta2})
                    .eps(o.eps)
                    .weight_decay(o.weight_decay));
  }
  return std::make_unique<torch::optim::SGD>(
      params, torch::optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(o.weight_decay));
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

double scheduled_lr(const SiftConfig& config, int64_t step, int64_t total_steps) {
  const auto& s = config.train.scheduler;
  const double lr = config.train.optimizer.lr;
  if (s.type != "linear" || total_steps <= 0) return lr;
  const double progress = std::min(1.0, static_cast<double>(step) / total_steps);
  return lr * (1.0 - (1.0 - s.final_lr_ratio) * progress);
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
  int64_t step = 0;
  int64_t epoch = 1;  // the epoch in progress
  int64_t examples_seen = 0;
  double epoch_loss_sum = 0.0;
  int64_t epoch_loss_examples = 0;
  nlohmann::json last_metrics;
  // The best weights so far, kept in memory: writing every improvement to disk would
  // cost more than training small models.
  std::vector<torch::Tensor> best_weights;
  nlohmann::json best_metrics;
  double best_accuracy = -1.0;
  int64_t best_epoch = 0;
  bool best_saved = true;
};

std::vector<torch::Tensor> weights_of(Classifier& model) {
  std::vector<torch::Tensor> w = model->parameters();
  for (auto& b : model->buffers()) w.push_back(b);
  return w;
}

void remember_best(Run& run, int64_t epoch, const nlohmann::json& metrics) {
  torch::NoGradGuard no_grad;
  auto current = weights_of(run.model);
  if (run.best_weights.empty()) {
    for (auto& w : current) run.best_weights.push_back(w.detach().clone());
  } else {
    for (size_t i = 0; i < current.size(); ++i) run.best_weights[i].copy_(current[i]);
  }
  run.best_epoch = epoch;
  run.best_metrics = metrics;
  run.best_saved = false;
}

void restore_best(Run& run) {
  if (run.best_weights.empty()) return;
  torch::NoGradGuard no_grad;
  auto current = weights_of(run.model);
  for (size_t i = 0; i < current.size(); ++i) current[i].copy_(run.best_weights[i]);
}

void save(Run& run, const std::string& name, int64_t epoch, const nlohmann::json& metrics) {
  Checkpoint c;
  c.meta = {{"model", run.config.model.type},
            {"num_classes", run.task.labels.size()},
            {"epoch", epoch},
            {"step", run.step},
            {"metrics", metrics}};
  run.model->to(torch::kCPU);
  c.blobs["model"] = module_bytes(*run.model);
  run.model->to(run.device);
  save_checkpoint(run_file(run.dir, name), c);
}

// Writes best.ckpt (from the weights in memory) when it changed since the last write.
void save_best(Run& run) {
  if (run.best_saved || run.best_weights.empty()) return;
  auto current = weights_of(run.model);
  std::vector<torch::Tensor> live;
  for (auto& w : current) live.push_back(w.detach().clone());
  restore_best(run);
  save(run, "best.ckpt", run.best_epoch, run.best_metrics);
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < current.size(); ++i) current[i].copy_(live[i]);
  run.best_saved = true;
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

// last.ckpt: everything a resumed run needs to continue exactly where this one stands.
void save_last(Run& run, const ShardedStream& stream, bool epoch_complete) {
  Checkpoint c;
  c.meta = {{"model", run.config.model.type},
            {"num_classes", run.task.labels.size()},
            {"epoch", run.epoch},
            {"epoch_complete", epoch_complete},
            {"step", run.step},
            {"examples_seen", run.examples_seen},
            {"train_records", run.task.train_records},
            {"train_skipped", run.task.train_skipped},
            {"epoch_loss_sum", run.epoch_loss_sum},
            {"epoch_loss_examples", run.epoch_loss_examples},
            {"best_accuracy", run.best_accuracy},
            {"best_epoch", run.best_epoch},
            {"metrics", run.last_metrics}};
  run.model->to(torch::kCPU);
  c.blobs["model"] = module_bytes(*run.model);
  run.model->to(run.device);
  c.blobs["optimizer"] = optimizer_bytes(*run.optimizer);
  c.blobs["rng"] = rng_state();
  if (!epoch_complete) c.blobs["data"] = stream.save_state();
  save_checkpoint(run_file(run.dir, "last.ckpt"), c);
  save_best(run);
}

int64_t total_steps_of(const Run& run) {
  const auto& t = run.config.train;
  const int64_t steps_per_epoch =
      (static_cast<int64_t>(run.task.train_records) + t.batch_size - 1) / t.batch_size;
  const int64_t total = steps_per_epoch * t.epochs;
  return t.max_steps > 0 ? std::min(total, t.max_steps) : total;
}

// Validation, metrics.jsonl and the epoch's log line.
void end_epoch(Run& run, ShardedStream* valid, Progress& progress) {
  nlohmann::json record = {
      {"epoch", run.epoch},
      {"step", run.step},
      {"train_loss", run.epoch_loss_examples ? run.epoch_loss_sum / run.epoch_loss_examples : 0.0},
      {"seconds", progress.elapsed_seconds()}};
  std::string line = fmt::format("epoch {}: train loss {:.4f}", run.epoch,
                                 record["train_loss"].get<double>());
  if (valid != nullptr) {
    const Evaluation e = evaluate(run.model, *valid, run.task.encoder.kind, run.task.labels.size(), run.device);
    record["valid_loss"] = e.loss;
    record["valid_accuracy"] = e.confusion.accuracy();
    record["valid_macro_f1"] = e.confusion.macro_f1();
    line += fmt::format(", valid accuracy {:.4f}, macro-F1 {:.4f}", e.confusion.accuracy(),
                        e.confusion.macro_f1());
    if (e.confusion.accuracy() > run.best_accuracy) {
      run.best_accuracy = e.confusion.accuracy();
      remember_best(run, run.epoch, record);
    }
  }
  append_line(run_file(run.dir, "metrics.jsonl"), record.dump());
  progress.log(line);
  run.last_metrics = record;
}

nlohmann::json train_epochs(Run& run, const TextEncoder& encoder, const std::string& data_state) {
  const auto& t = run.config.train;
  auto batches = open_stream(run.config, "train", encoder, run.task.labels, true);
  auto valid = open_stream(run.config, "valid", encoder, run.task.labels, false);
  const int64_t total_steps = total_steps_of(run);
  Progress progress(total_steps, t.log_every, run.options.quiet);
  const bool sum_loss = t.loss_reduction == "sum";
  auto loss_options = torch::nn::functional::CrossEntropyFuncOptions();
  if (sum_loss) loss_options.reduction(torch::kSum);
  const auto save_interval = std::chrono::duration<double>(t.checkpoint_minutes * 60.0);
  auto last_save = std::chrono::steady_clock::now();
  const int64_t first_step = run.step;
  bool resume_mid_epoch = !data_state.empty();
  if (resume_mid_epoch) batches->restore_state(data_state);
  run.model->train();
  RawBatch batch;
  for (; run.epoch <= t.epochs && run.step < total_steps; ++run.epoch) {
    if (!resume_mid_epoch) {
      batches->start_epoch(static_cast<uint64_t>(run.epoch));
      run.epoch_loss_sum = 0.0;
      run.epoch_loss_examples = 0;
    }
    resume_mid_epoch = false;
    bool more = true;
    while (run.step < total_steps && (more = batches->next(batch))) {
      const double lr = scheduled_lr(run.config, run.step, total_steps);
      set_lr(*run.optimizer, lr);
      run.optimizer->zero_grad();
      auto logits = run.model->forward(to_input(batch, run.task.encoder.kind, run.device));
      auto labels =
          torch::from_blob(batch.labels.data(), {batch.size()}, torch::kInt64).to(run.device);
      auto loss = torch::nn::functional::cross_entropy(logits, labels, loss_options);
      loss.backward();
      run.optimizer->step();
      ++run.step;
      run.examples_seen += batch.size();
      const double batch_loss = loss.item<double>() / (sum_loss ? batch.size() : 1);
      run.epoch_loss_sum += batch_loss * batch.size();
      run.epoch_loss_examples += batch.size();
      progress.update(run.step, run.epoch, run.examples_seen, batch_loss, lr);
      if (std::chrono::steady_clock::now() - last_save >= save_interval) {
        save_last(run, *batches, false);
        last_save = std::chrono::steady_clock::now();
      }
    }
    // A step limit inside an epoch: save where the data stands, so that a resume with a
    // higher limit continues exactly.
    if (more && run.step >= total_steps) {
      save_last(run, *batches, false);
      break;
    }
    end_epoch(run, valid.get(), progress);
    save_last(run, *batches, true);
    last_save = std::chrono::steady_clock::now();
  }
  progress.finish_line();
  const double seconds = progress.elapsed_seconds();
  const int64_t steps = run.step - first_step;
  return {{"steps", run.step},
          {"examples", run.examples_seen},
          {"seconds", seconds},
          {"examples_per_second",
           seconds > 0 ? static_cast<double>(steps) * t.batch_size / seconds : 0.0},
          {"records", run.task.train_records},
          {"skipped_records", run.task.train_skipped},
          {"workers", run.config.data.workers},
          {"best_epoch", run.best_epoch}};
}

// Evaluates the best weights on the validation and test splits.
nlohmann::json final_evaluation(Run& run, const TextEncoder& encoder, std::string& text_report) {
  nlohmann::json splits = nlohmann::json::object();
  restore_best(run);
  for (const std::string name : {"valid", "test"}) {
    auto stream = open_stream(run.config, name, encoder, run.task.labels, false);
    if (!stream) continue;
    const Evaluation e = evaluate(run.model, *stream, run.task.encoder.kind, run.task.labels.size(), run.device);
    if (e.confusion.total() == 0) throw Error(empty_split_message(name, *stream));
    splits[name] = e.confusion.to_json(run.task.labels.names());
    splits[name]["loss"] = e.loss;
    splits[name]["skipped_records"] = stream->skipped();
    text_report += fmt::format("== {} ==\n{}\n", name, e.confusion.to_text(run.task.labels.names()));
  }
  return splits;
}

}  // namespace

void apply_threads(int64_t threads) {
  const int n = threads > 0 ? static_cast<int>(threads)
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(n);
}

void validate_for_training(const SiftConfig& config) {
  if (config.data.train.path.empty()) {
    throw Error("data.train.path: The training data must be given (a path, a glob or a list).");
  }
  for (const char* split : {"train", "valid", "test"}) {
    const FormatConfig f = resolved_format(config, split);
    const bool columns = f.format == "tsv" || f.format == "csv" || f.format == "jsonl";
    if (columns && (f.text.empty() || f.label.empty())) {
      throw Error(fmt::format("data.{}: The {} format needs 'text' and 'label' columns "
                              "(set data.text and data.label).",
                              split, f.format));
    }
    if (f.label_mapping != "name" && config.data.labels.empty()) {
      throw Error(fmt::format("data.{}.label_mapping: Index labels need the label names in "
                              "data.labels.",
                              split));
    }
  }
}

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
  write_file_atomically(run_file(run.dir, "report.json"), report.dump(2) + "\n");
  write_file_atomically(run_file(run.dir, "report.txt"), text);
  return report;
}

void start_run(Run& run, const SiftConfig& config, const TrainOptions& options) {
  validate_for_training(config);
  apply_threads(config.run.threads);
  torch::manual_seed(static_cast<uint64_t>(config.run.seed));
  run.config = config;
  run.options = options;
  run.device = parse_device(config.run.device);
}

// Options a resumed run may not change: they fix the saved model's shape or inputs.
void refuse_shape_changes(const std::vector<std::string>& overrides) {
  for (const auto& o : overrides) {
    const std::string key = o.substr(0, o.find('='));
    if (key.rfind("model.", 0) == 0 || key.rfind("tokenizer.", 0) == 0 || key == "data.labels") {
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
  run.task = build_task(config);  // create the data
  run.dir = create_run_dir(config);
  write_file_atomically(run_file(run.dir, "config.yaml"), dump_config(config));
  run.task.labels.save(run_file(run.dir, "labels.txt"));
  run.task.vocab->save(run_file(run.dir, "vocab.txt"));
  if (run.task.pieces) copy_file_atomically(config.tokenizer.model, run_file(run.dir, "tokenizer.model"));
  std::remove(run_file(run.dir, "metrics.jsonl").c_str());
  std::remove(run_file(run.dir, "best.ckpt").c_str());
  run.model = create_model(config, run.task);  // create the model
  run.model->to(run.device);
  run.optimizer = create_optimizer(config, run.model);  // create the optimizer
  return finish_run(run, "");
}

nlohmann::json resume(const std::string& run_dir, const std::vector<std::string>& overrides,
                      const TrainOptions& options) {
  refuse_shape_changes(overrides);
  ModelBundle saved = load_run(run_dir, overrides);
  const std::string last_path = run_file(run_dir, "last.ckpt");
  const Checkpoint last = load_checkpoint(last_path);
  for (const char* blob : {"model", "optimizer", "rng"}) {
    if (!last.blobs.count(blob)) throw Error(fmt::format("{} holds no {} state", last_path, blob));
  }
  Run run;
  start_run(run, saved.config, options);
  run.dir = run_dir;
  run.task = saved.task;
  run.task.train_records = last.meta.value("train_records", uint64_t{0});
  run.task.train_skipped = last.meta.value("train_skipped", uint64_t{0});
  run.model = saved.model;  // best weights: kept as the best so far
  run.model->to(run.device);
  run.best_accuracy = last.meta.value("best_accuracy", -1.0);
  run.best_epoch = last.meta.value("best_epoch", int64_t{0});
  if (run.best_epoch > 0) remember_best(run, run.best_epoch, nlohmann::json());
  run.best_saved = true;
  load_module_bytes(*run.model, last.blobs.at("model"), last_path);
  run.model->train();
  run.optimizer = create_optimizer(run.config, run.model);
  load_optimizer_bytes(*run.optimizer, last.blobs.at("optimizer"), last_path);
  set_rng_state(last.blobs.at("rng"));
  run.step = last.meta.value("step", int64_t{0});
  run.examples_seen = last.meta.value("examples_seen", int64_t{0});
  run.epoch = last.meta.value("epoch", int64_t{1});
  run.last_metrics = last.meta.value("metrics", nlohmann::json());
  std::string data_state;
  if (last.meta.value("epoch_complete", true)) {
    ++run.epoch;
  } else {
    data_state = last.blobs.count("data") ? last.blobs.at("data") : "";
    if (data_state.empty()) throw Error(fmt::format("{} holds no data position", last_path));
    run.epoch_loss_sum = last.meta.value("epoch_loss_sum", 0.0);
    run.epoch_loss_examples = last.meta.value("epoch_loss_examples", int64_t{0});
  }
  if (!overrides.empty()) {
    write_file_atomically(run_file(run.dir, "config.yaml"), dump_config(run.config));
  }
  return finish_run(run, data_state);
}

}  // namespace sift
