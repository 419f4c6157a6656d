#include "framework/train/base/fast_path_rules.h"

#include <fmt/format.h>

#include <cstdlib>

#include "framework/train/base/run_plan.h"
#include "models/base/traits.h"

namespace sift {

std::string fast_path_refusal(const TrainConfig& t, const FastPathCase& c) {
  const auto& o = t.optimizer;
  if (t.fast_path == FastPath::off) return "train.fast_path: off";
  if (!c.fused_step) return fmt::format("model.type {} has no fused loop", c.model_type);
  if (o.type != OptimizerType::sgd) {
    return fmt::format("train.optimizer.type {}", to_string(o.type));
  }
  if (o.momentum > 0) return "train.optimizer.momentum > 0";
  if (o.weight_decay > 0) return "train.optimizer.weight_decay > 0";
  if (t.precision != Precision::fp32)
    return fmt::format("train.precision {}", to_string(t.precision));
  if (c.loss_scaling) return "train.loss_scaling";
  if (!c.device.empty() && c.device != "cpu") return fmt::format("run.device {}", c.device);
  if (c.distributed) return "distributed training";
  if (c.multi_label) return "data.multi_label";
  if (!t.class_weights.empty()) return "train.class_weights";
  if (t.label_smoothing > 0) return "train.label_smoothing > 0";
  if (t.clip_norm > 0) return "train.clip_norm > 0";
  if (t.max_norm > 0) return "train.max_norm > 0";
  if (t.accumulate > 1) return "train.accumulate > 1";
  if (!t.freeze.empty()) return "train.freeze";
  if (!t.distill.teacher.empty()) return "train.distill.teacher";
  if (!t.prune.structure.empty()) return "train.prune";
  return "";
}

FastPathCase fast_path_case(const SiftConfig& config) {
  const TrainConfig& t = config.train;
  FastPathCase c;
  c.model_type = config.model.type;
  c.fused_step = traits_of(config.model.type).fused_step;
  c.multi_label = config.data.multi_label;
  c.loss_scaling = loss_scaling_enabled(t.loss_scaling, t.precision);
  c.device = config.run.device;
  const char* world = std::getenv("WORLD_SIZE");
  c.distributed = world != nullptr && std::string(world) != "1";
  return c;
}

}  // namespace sift
