#include "framework/train/run_plan.h"

#include "config/options.h"
#include "config/validate.h"
#include "framework/runtime/device.h"
#include "models/model.h"

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
  o.device = parse_device(config.run.device);
  o.agreed_options = agreed_options(config);
  return o;
}

}  // namespace

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
  return p;
}

}  // namespace sift
