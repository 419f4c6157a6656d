#include "framework/trainer.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

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
  if (name == "last.ckpt") c.blobs["optimizer"] = optimizer_bytes(*run.optimizer);
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

nlohmann::json train_epochs(Run& run, const TextEncoder& encoder) {
  const auto& t = run.config.train;
  auto train_stream = open_stream(run.config, "train", encoder, run.task.labels, true);
  ShardedStream& batches = *train_stream;
  auto valid = open_stream(run.config, "valid", encoder, run.task.labels, false);
  const int64_t steps_per_epoch =
      (static_cast<int64_t>(run.task.train_records) + t.batch_size - 1) / t.batch_size;
  int64_t total_steps = steps_per_epoch * t.epochs;
  if (t.max_steps > 0) total_steps = std::min(total_steps, t.max_steps);
  Progress progress(total_steps, t.log_every, run.options.quiet);
  const bool sum_loss = t.loss_reduction == "sum";
  auto loss_options = torch::nn::functional::CrossEntropyFuncOptions();
  if (sum_loss) loss_options.reduction(torch::kSum);
  const std::string metrics_path = run_file(run.dir, "metrics.jsonl");
  int64_t examples_seen = 0;
  nlohmann::json last_metrics;
  const auto save_interval = std::chrono::duration<double>(t.checkpoint_minutes * 60.0);
  auto last_save = std::chrono::steady_clock::now();
  run.model->train();
  for (int64_t epoch = 1; epoch <= t.epochs && run.step < total_steps; ++epoch) {
    batches.start_epoch(static_cast<uint64_t>(epoch));
    RawBatch batch;
    double loss_sum = 0.0;
    int64_t loss_examples = 0;
    while (run.step < total_steps && batches.next(batch)) {
      const double lr = scheduled_lr(run.config, run.step, total_steps);
      set_lr(*run.optimizer, lr);
      run.optimizer->zero_grad();
      auto logits = run.model->forward(to_input(batch, run.device));
      auto labels =
          torch::from_blob(batch.labels.data(), {batch.size()}, torch::kInt64).to(run.device);
      auto loss = torch::nn::functional::cross_entropy(logits, labels, loss_options);
      loss.backward();
      run.optimizer->step();
      ++run.step;
      examples_seen += batch.size();
      const double batch_loss = loss.item<double>() / (sum_loss ? batch.size() : 1);
      loss_sum += batch_loss * batch.size();
      loss_examples += batch.size();
      progress.update(run.step, epoch, examples_seen, batch_loss, lr);
    }
    nlohmann::json record = {{"epoch", epoch},
                             {"step", run.step},
                             {"train_loss", loss_examples ? loss_sum / loss_examples : 0.0},
                             {"seconds", progress.elapsed_seconds()}};
    if (valid) {
      const Evaluation e = evaluate(run.model, *valid, run.task.labels.size(), run.device);
      record["valid_loss"] = e.loss;
      record["valid_accuracy"] = e.confusion.accuracy();
      record["valid_macro_f1"] = e.confusion.macro_f1();
      if (e.confusion.accuracy() > run.best_accuracy) {
        run.best_accuracy = e.confusion.accuracy();
        remember_best(run, epoch, record);
      }
    }
    append_line(metrics_path, record.dump());
    progress.log(fmt::format("epoch {}: train loss {:.4f}{}", epoch,
                             record["train_loss"].get<double>(),
                             valid ? fmt::format(", valid accuracy {:.4f}, macro-F1 {:.4f}",
                                                 record["valid_accuracy"].get<double>(),
                                                 record["valid_macro_f1"].get<double>())
                                   : std::string()));
    last_metrics = record;
    const bool finished = epoch == t.epochs || run.step >= total_steps;
    if (finished || std::chrono::steady_clock::now() - last_save >= save_interval) {
      save(run, "last.ckpt", epoch, record);
      save_best(run);
      last_save = std::chrono::steady_clock::now();
    }
  }
  progress.finish_line();
  const double seconds = progress.elapsed_seconds();
  return {{"steps", run.step},
          {"examples", examples_seen},
          {"seconds", seconds},
          {"examples_per_second", seconds > 0 ? examples_seen / seconds : 0.0},
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
    const Evaluation e = evaluate(run.model, *stream, run.task.labels.size(), run.device);
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
  check_model_options(config);
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

nlohmann::json train(const SiftConfig& config, const TrainOptions& options) {
  validate_for_training(config);
  apply_threads(config.run.threads);
  torch::manual_seed(static_cast<uint64_t>(config.run.seed));
  Run run;
  run.config = config;
  run.options = options;
  run.device = parse_device(config.run.device);
  run.task = build_task(config);  // create the data
  run.dir = create_run_dir(config);
  write_file_atomically(run_file(run.dir, "config.yaml"), dump_config(config));
  run.task.labels.save(run_file(run.dir, "labels.txt"));
  run.task.vocab->save(run_file(run.dir, "vocab.txt"));
  std::remove(run_file(run.dir, "metrics.jsonl").c_str());
  run.model = create_model(config, run.task);  // create the model
  run.model->to(run.device);
  run.optimizer = create_optimizer(config, run.model);  // create the optimizer

  const TextEncoder encoder(run.task.vocab, run.task.encoder);
  nlohmann::json report;
  report["run_dir"] = run.dir;
  report["train"] = train_epochs(run, encoder);
  report["train"]["vocabulary"] = run.task.vocab->size();
  report["labels"] = run.task.labels.names();
  std::string text = fmt::format("Run {}\n\n", run.dir);
  report["splits"] = final_evaluation(run, encoder, text);
  write_file_atomically(run_file(run.dir, "report.json"), report.dump(2) + "\n");
  write_file_atomically(run_file(run.dir, "report.txt"), text);
  return report;
}

}  // namespace sift
