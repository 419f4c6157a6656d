#include "framework/train/base/run_plan.h"

#include <fmt/format.h>

#include <filesystem>

#include "config/loader.h"
#include "config/options.h"
#include "config/validate.h"
#include "core/error.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/train/base/fast_path_rules.h"
#include "framework/train/base/thread_split.h"
#include "models/base/traits.h"

namespace sift {
namespace {

PrecisionPlan precision_plan(const TrainConfig& t) {
  PrecisionPlan p;
  p.autocast = t.precision;
  p.recompute = recompute_policy(t.gradient_checkpointing, t.gradient_checkpointing_every);
  p.loss_scaling = loss_scaling_enabled(t.loss_scaling, t.precision);
  p.scaler.growth_interval = t.loss_scale_growth_interval;
  return p;
}

DistributedOptions distributed_plan(const SiftConfig& config) {
  DistributedOptions o;
  o.timeout =
      std::chrono::milliseconds(static_cast<int64_t>(config.run.dist_timeout_seconds * 1000.0));
  o.backend = config.run.dist_backend;
  o.bucket_mb = config.train.bucket_mb;
  o.shard = config.run.shard;
  o.device = config.run.device;
  o.agreed_options = agreed_options(config);
  return o;
}

// A run folder's weights fit only a model of its own type: refused before the run folder
// is made (the checkpoint's shapes would be named, not the key).
void check_init_from(const SiftConfig& config) {
  const std::string& from = config.train.init_from;
  if (from.empty() || !std::filesystem::is_directory(from)) return;
  const std::string path = run_file(from, kConfigFile);
  if (!std::filesystem::exists(path)) return;  // load_run_weights names what is missing
  const std::string type = load_config(path).model.type;
  if (type == config.model.type) return;
  throw Error(fmt::format(
      "train.init_from: {} holds a '{}' model, and this config trains '{}': a run's weights "
      "fit only a model of its own type",
      from, type, config.model.type));
}

}  // namespace

bool loss_scaling_enabled(LossScaling loss_scaling, Precision precision) {
  return loss_scaling == LossScaling::dynamic ||
         (loss_scaling == LossScaling::automatic && precision == Precision::fp16);
}

bool node_option(const std::string& key) {
  return key == "run.threads" || key == "run.device" || key == "data.workers" ||
         key == "run.dist_timeout_seconds";
}

std::string agreed_options(const SiftConfig& config) {
  std::string out;
  for (const auto& option : all_options()) {
    const std::string& key = option.name;
    if (node_option(key) || key.rfind("run.overwrite", 0) == 0) continue;
    out += key + "=" + emitted(option, config) + "\n";
  }
  return out;
}

RunPlan resolve_run(const SiftConfig& config) {
  validate(config, model_traits());
  check_init_from(config);
  RunPlan p;
  p.given = config;
  p.data = resolve_data(config);
  p.model = config.model;
  p.train = config.train;
  p.loss = resolve_loss(config);
  p.labels = label_mode(config);
  p.precision = precision_plan(config.train);
  p.distributed = distributed_plan(config);
  p.threads = config.run.threads;
  p.seed = static_cast<uint64_t>(config.run.seed);
  p.device = p.distributed.device;
  p.fast_path_refusal = fast_path_refusal(config.train, fast_path_case(config));
  return p;
}

RunPlan plan_training(const SiftConfig& config) {
  SiftConfig split = config;
  const std::string thread_split = apply_core_split(split);  // run.threads 0's cores
  RunPlan plan = resolve_run(split);
  plan.thread_split = thread_split;
  return plan;
}

}  // namespace sift
