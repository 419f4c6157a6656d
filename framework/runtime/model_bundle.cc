#include "framework/runtime/model_bundle.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/error.h"
#include "framework/runtime/all_finite.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/runtime/base/run_text.h"
#include "framework/runtime/base/run_weights.h"
#include "framework/runtime/device.h"

namespace sift {

Classifier create_model(const ModelConfig& model, const OptimizerConfig& o, const Task& task,
                        const LossOptions& loss) {
  const ModelSpec& spec = find_model(model.type);
  ModelShape shape;
  TextEncoder encoder = make_encoder(task);
  shape.num_ids = encoder.num_ids();
  shape.num_classes = task.labels.size();
  shape.vocab = task.vocab;
  shape.loss = loss.loss;
  shape.label_counts = task.label_counts;
  shape.negatives = loss.negatives;
  shape.masked_lm = task.masked_lm;
  shape.sparse_gradients = spec.traits.sparse_gradients && o.type == OptimizerType::sgd &&
                           o.momentum == 0.0 && o.weight_decay == 0.0;
  const Allocating weights = allocating_weights(model);
  return spec.create(model, shape);
}

namespace {

// A diverged run's weights would print `nan` as every score; no use of them is silent.
void refuse_nonfinite_weights(Classifier& model, const std::string& path) {
  torch::NoGradGuard no_grad;
  for (const auto& item : model->named_parameters()) {
    const torch::Tensor& w = item.value();
    const std::string& name = item.key();
    if (w.is_floating_point() && !all_finite(w)) {
      throw Error(
          fmt::format("{}: the weights '{}' hold NaN/inf (the run diverged); retrain "
                      "with a lower train.optimizer.lr, train.loss_reduction: mean or "
                      "train.clip_norm",
                      path, name));
    }
  }
}

}  // namespace

void check_classifier(const ModelBundle& bundle) {
  if (!bundle.task.masked_lm) return;
  const bool folder = std::filesystem::is_directory(bundle.run_dir);
  throw Error(fmt::format(
      "{} is a `sift pretrain` run{}: an encoder without classes, which does not predict or "
      "evaluate; fine-tune it (`sift train` with train.init_from: {}) and use that run",
      bundle.run_dir, folder ? "" : "'s encoder export",
      folder ? bundle.run_dir : "its run folder"));
}

ModelBundle load_run(const std::string& run_dir, const std::vector<std::string>& overrides) {
  RunText text = load_run_text(run_dir, overrides,
                               [](const std::string& type) { return find_model(type).input; });
  ModelBundle b;
  b.run_dir = run_dir;
  b.config = std::move(text.config);
  b.task.labels = std::move(text.labels);
  b.task.vocab = std::move(text.vocab);
  b.task.pieces = std::move(text.pieces);
  b.task.wordpiece = std::move(text.wordpiece);
  b.task.encoder = std::move(text.encoder);
  b.task.masked_lm = !b.config.pretrain.files.empty();
  std::string path;
  const StoredCheckpoint checkpoint = load_run_weights(run_dir, &path);
  if (checkpoint.meta.value("model", "") != b.config.model.type) {
    throw Error(fmt::format("{} holds a '{}' model, but {} says '{}'", path,
                            checkpoint.meta.value("model", "?"), run_file(run_dir, kConfigFile),
                            b.config.model.type));
  }
  // The weights come from the checkpoint: word vectors need not be read (or still exist).
  ModelConfig model_config = b.config.model;
  model_config.pretrained.clear();
  b.model = create_model(model_config, b.config.train.optimizer, b.task, resolve_loss(b.config));
  b.model->remember_fills(load_model_weights(*b.model, checkpoint, path));
  refuse_nonfinite_weights(b.model, path);
  b.device = parse_device(b.config.run.device);
  b.model->to(b.device);
  b.model->eval();
  return b;
}

}  // namespace sift
