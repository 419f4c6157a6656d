#include "framework/train/setup.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <cstdio>
#include <filesystem>

#include "config/loader.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/runtime/base/tensor_memory.h"
#include "framework/runtime/compute_threads.h"
#include "framework/runtime/device.h"
#include "framework/runtime/loss.h"
#include "framework/runtime/model_bundle.h"
#include "framework/train/base/run_plan.h"
#include "framework/train/distill.h"
#include "framework/train/distributed_training.h"
#include "framework/train/fast_path.h"
#include "framework/train/optimization.h"
#include "framework/train/precision.h"
#include "framework/train/pretraining.h"

namespace sift {
namespace {

namespace fs = std::filesystem;

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

// "balanced": n / (classes x count) per label; a label never seen weighs 0.
std::vector<float> balanced_weights(const Task& task) {
  const int64_t classes = task.labels.size();
  uint64_t total = 0;
  for (auto c : task.label_counts) total += c;
  std::vector<float> w;
  for (int64_t k = 0; k < classes; ++k) {
    const uint64_t count =
        k < static_cast<int64_t>(task.label_counts.size()) ? task.label_counts[k] : 0;
    w.push_back(count == 0 ? 0.0f : static_cast<float>(total) / (classes * count));
  }
  return w;
}

std::vector<float> explicit_weights(const std::vector<std::string>& given, const Task& task) {
  const int64_t classes = task.labels.size();
  if (static_cast<int64_t>(given.size()) != classes) {
    throw Error(fmt::format("train.class_weights: The {} weights must be one per label ({}: {}).",
                            given.size(), classes, fmt::join(task.labels.names(), ", ")));
  }
  std::vector<float> w;
  for (const auto& v : given) {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(x >= 0)) {
      throw Error(fmt::format("train.class_weights: '{}' is not a weight >= 0", v));
    }
    w.push_back(static_cast<float>(x));
  }
  return w;
}

// train.class_weights: explicit numbers, or "balanced" (n / (classes x count)).
torch::Tensor class_weights(const TrainConfig& t, const Task& task, bool multi_label) {
  if (t.class_weights.empty()) return {};
  const bool balanced = t.class_weights.size() == 1 && t.class_weights[0] == "balanced";
  if (balanced && multi_label) return balanced_pos_weight(task.label_counts, task.train_records);
  return torch::tensor(balanced ? balanced_weights(task) : explicit_weights(t.class_weights, task));
}

}  // namespace

void start_run(Run& run, const SiftConfig& config, const TrainOptions& options) {
  run.plan = plan_training(config);  // every check between options, then each part once
  count_tensor_memory();  // the phase table's peak tensor bytes (one atomic add per tensor)
  apply_threads(run.plan.threads);
  run.dist = join_for_training(run.plan.distributed, run.plan.threads);
  torch::manual_seed(run.plan.seed + static_cast<uint64_t>(run.dist->rank()));
  run.options = options;
  run.options.quiet = options.quiet || !run.dist->is_primary();
  run.device = parse_device(run.plan.device);
  const ShardStage shard = run.plan.distributed.shard;
  if (shard != ShardStage::none && !run.dist->is_group()) {
    throw Error(fmt::format(
        "run.shard: {} shards across the processes of a distributed run, and this is one "
        "process; start it with `sift launch --nproc N -- sift train ...` or set run.shard: none",
        to_string(shard)));
  }
}

void write_run_folder(Run& run) {
  const SiftConfig& config = run.plan.given;  // written out, not read for options
  run.dir = on_primary(*run.dist, "run_dir", [&] { return create_run_folder(config, run.lock); });
  if (!run.dist->is_primary()) return;
  write_run_text(run.dir, config, run.task, run.plan.data);
  run.file_hashes = run_file_hashes(run.dir);
}

std::string init_from(ClassifierImpl& model, const std::string& from) {
  std::string path = from;
  const StoredCheckpoint c =
      fs::is_directory(from) ? load_run_weights(from, &path) : read_checkpoint(from, {"model"});
  std::vector<std::string> left;
  const auto may_differ = [](const std::string& name) {
    return name.rfind(kOutputLayerPrefix, 0) == 0 || name.rfind(kMaskedLmHeadPrefix, 0) == 0;
  };
  model.remember_fills(load_model_weights(model, c, path, {may_differ, &left}));
  if (left.empty()) return "";
  return fmt::format("train.init_from: {} fits but for {}, which start anew or are left out", path,
                     fmt::join(left, ", "));
}

namespace {

// run.shard: parameters: the trainable table the model's forward reads by rows
// (ClassifierImpl::row_table), or "" (none, or frozen).
std::string row_table(const Run& run) {
  const std::string table = run.model->row_table();
  const auto named = run.model->named_parameters();
  const torch::Tensor* p = named.find(table);
  return p != nullptr && p->requires_grad() ? table : "";
}

// run.shard: parameters: each trainable parameter's layer (`table`, kept by rows: unit 0;
// the layers, ClassifierImpl::depth_of 1 to layer_count: the units after it), or -1 for
// the rest, which stays whole; empty for the other stages.
std::vector<int64_t> layer_units(const Run& run, const std::string& table) {
  if (run.plan.distributed.shard != ShardStage::parameters) return {};
  std::vector<int64_t> units;
  const int64_t first_layer = table.empty() ? 0 : 1;
  for (const auto& named : run.model->named_parameters()) {
    if (!named.value().requires_grad()) continue;
    const int64_t depth = run.model->depth_of(named.key());
    const bool in_layer = depth >= 1 && depth <= run.model->layer_count();
    units.push_back(named.key() == table ? 0 : in_layer ? first_layer + depth - 1 : -1);
  }
  return units;
}

}  // namespace

void prepare_training(Run& run) {
  if (run.plan.data.masked_lm) {
    run.masking = task_masking_vocab(run.task);
  }
  freeze(*run.model, run.plan.train.freeze);
  run.model->to(run.device);
  run.dist->broadcast_parameters(*run.model);
  const TrainConfig& t = run.plan.train;
  const torch::Tensor w = class_weights(t, run.task, run.plan.data.multi_label);
  if (w.defined()) run.class_weights = w.to(run.device);
  const std::vector<ParamGroup> groups = param_groups(*run.model, t.optimizer);
  run.optimizer = create_optimizer(t.optimizer, groups);
  run.lr_scales = lr_scales(groups);
  if (run.plan.distributed.shard != ShardStage::none) {
    if (groups.size() > 1) {
      throw Error(fmt::format(
          "run.shard: {} shards one group of parameters, and train.optimizer asks for {} "
          "(layer_decay below 1, or adamw's weight decay, which biases and LayerNorm weights "
          "go without); set run.shard: none",
          to_string(run.plan.distributed.shard), groups.size()));
    }
    const std::vector<torch::Tensor> params = trainable(run.model->parameters());
    const std::string table = row_table(run);
    const std::vector<int64_t> units = layer_units(run, table);
    run.shards =
        std::make_unique<ShardedOptimizer>(*run.dist, run.plan.distributed.shard, t.optimizer,
                                           params, run.plan.distributed.bucket_mb, units);
    run.optimizer->state().clear();  // Adagrad's is made at once; the slices hold it
    if (!units.empty()) {
      run.layers = std::make_unique<LayerShards>(*run.dist, *run.shards, params, units,
                                                 run.model->parameters(), table.empty() ? 0 : 1);
      run.model->set_block_shards(run.layers.get());
    }
  }
  run.model->set_recompute(run.plan.precision.recompute);
  run.scaler = make_scaler(run.plan.precision);
  if (!t.distill.teacher.empty()) {  // every rank its own
    run.teacher = load_teacher(t.distill.teacher, run.plan.data.multi_label, run.task, run.device);
  }
  if (!t.prune.structure.empty()) {
    run.pruner = std::make_unique<Pruner>(t.prune, t.optimizer, run.plan.model, *run.model);
  }
  choose_training_path(run);
}

std::vector<std::string> data_keys_changed(const std::vector<std::string>& overrides,
                                           bool allowed) {
  std::vector<std::string> keys;
  for (const auto& o : overrides) {
    const std::string key = o.substr(0, o.find('='));
    if (key != "data.train.path" && key != "data.valid.path" && key != "data.valid_split" &&
        key != "data.folds" && key != "data.fold") {
      continue;
    }
    if (!allowed) {
      throw Error(fmt::format(
          "--set {}: a resumed run keeps the data it trained and validated on (another split "
          "or other files would validate on records it trained on); give --allow-data-change "
          "to change it anyway (report.json records it), or start a new run",
          key));
    }
    keys.push_back(key);
  }
  return keys;
}

void refuse_shape_changes(const std::vector<std::string>& overrides) {
  for (const auto& o : overrides) {
    const std::string key = o.substr(0, o.find('='));
    if (key == "train.distill.teacher") {
      throw Error(
          "--set train.distill.teacher: a resumed run keeps its teacher (the saved data "
          "position holds texts in that teacher's encoding); start a new run instead");
    }
    if (key.rfind("model.", 0) == 0 || key.rfind("tokenizer.", 0) == 0 || key == "data.labels" ||
        key == "data.multi_label") {
      throw Error(
          fmt::format("--set {}: a resumed run cannot change '{}', which fixes the saved "
                      "model's shape or inputs; start a new run instead",
                      key, key));
    }
  }
}

}  // namespace sift
