#include "framework/runtime/model_bundle.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "config/loader.h"
#include "core/error.h"
#include "framework/runtime/all_finite.h"
#include "framework/runtime/device.h"
#include "framework/runtime/run_folder.h"

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
  shape.sparse_gradients = spec.traits.sparse_gradients && o.type == OptimizerType::sgd &&
                           o.momentum == 0.0 && o.weight_decay == 0.0;
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

namespace {

// Whether a last.ckpt's own weights are the run's best (its best validation was at its
// step). A save writes last.ckpt, then best.ckpt naming it: a crash between the two
// leaves best.ckpt naming the last.ckpt before, and these weights the best. (A missing
// best.ckpt stays an error here; `train --resume` writes it again.)
bool weights_are_best(const Checkpoint& last) {
  return last.meta.value("has_best", false) &&
         last.meta.value("best_step", int64_t{-1}) == last.meta.value("step", int64_t{-2});
}

}  // namespace

Checkpoint load_run_weights(const std::string& run_dir, std::string* path_out) {
  // Weights and optimizer state stay on disk: the weights are read straight into the
  // model (load_model_weights), the optimizer state is not needed here.
  const std::vector<std::string> on_disk = {"model", "optimizer"};
  std::string path = run_file(run_dir, kBestCheckpointFile);
  if (!std::filesystem::exists(path)) path = run_file(run_dir, kLastCheckpointFile);
  Checkpoint checkpoint = load_checkpoint(path, on_disk);
  if (path != run_file(run_dir, kBestCheckpointFile) && checkpoint.meta.value("has_best", false)) {
    // A run without validation has no best.ckpt; one that had a best lost it.
    throw Error(
        fmt::format("{} is missing: {} records a best validation at step {}, so the "
                    "run's best weights are gone (copy last.ckpt to best.ckpt to use "
                    "the last weights instead)",
                    run_file(run_dir, kBestCheckpointFile), path,
                    checkpoint.meta.value("best_step", int64_t{-1})));
  }
  check_run_file_hashes(run_dir, checkpoint.meta, path);
  if (checkpoint.meta.contains("weights_in")) {  // best.ckpt naming last.ckpt's weights
    // Only ever last.ckpt of the same folder: a path would be followed anywhere.
    const nlohmann::json& named = checkpoint.meta["weights_in"];
    if (!named.is_string() || named.get<std::string>() != kLastCheckpointFile) {
      throw Error(fmt::format("{}: weights_in must name this run's {} (found {})", path,
                              kLastCheckpointFile, named.dump()));
    }
    const std::string last_path = run_file(run_dir, kLastCheckpointFile);
    Checkpoint last = load_checkpoint(last_path, on_disk);
    if (last.meta.value("step", int64_t{-1}) != checkpoint.meta.value("step", int64_t{-2}) &&
        !weights_are_best(last)) {
      throw Error(fmt::format("{} names the weights of {} at step {}, but that file is at step {}",
                              path, last_path, checkpoint.meta.value("step", int64_t{-2}),
                              last.meta.value("step", int64_t{-1})));
    }
    if (last.on_disk.count("model")) checkpoint.on_disk["model"] = last.on_disk.at("model");
  }
  if (!checkpoint.on_disk.count("model")) {
    throw Error(fmt::format("{} holds no model weights", path));
  }
  if (path_out != nullptr) *path_out = path;
  return checkpoint;
}

ModelBundle load_run(const std::string& run_dir, const std::vector<std::string>& overrides) {
  if (!std::filesystem::is_directory(run_dir)) {
    throw Error(fmt::format("{} is not a run folder (no such directory)", run_dir));
  }
  ModelBundle b;
  b.run_dir = run_dir;
  const std::string config_path = run_file(run_dir, kConfigFile);
  // An empty config.yaml loads as the defaults, and was blamed on best.ckpt's model type.
  if (std::filesystem::exists(config_path) && std::filesystem::file_size(config_path) == 0) {
    throw Error(fmt::format("{} is empty", config_path));
  }
  b.config = load_config(config_path, overrides);
  b.task.labels = LabelSet::load(run_file(run_dir, kLabelsFile));
  b.task.vocab = std::make_shared<Vocab>(Vocab::load(run_file(run_dir, kVocabFile)));
  SiftConfig encoder_config = b.config;
  // The run keeps the stop words it was trained with: the original file may be gone.
  if (!encoder_config.tokenizer.stopwords.empty()) {
    encoder_config.tokenizer.stopwords = run_file(run_dir, kStopwordsFile);
  }
  b.task.encoder = resolve_data(encoder_config).encoder;
  if (b.config.tokenizer.type == TokenizerType::sentencepiece) {
    b.task.pieces = SentencePieceModel::open(run_file(run_dir, kTokenizerModelFile));
  }
  std::string path;
  const Checkpoint checkpoint = load_run_weights(run_dir, &path);
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
