#include "framework/model_bundle.h"

#include <fmt/format.h>

#include <filesystem>

#include "framework/checkpoint.h"
#include "framework/config/loader.h"
#include "framework/error.h"

namespace sift {

std::string run_file(const std::string& run_dir, const std::string& name) {
  return (std::filesystem::path(run_dir) / name).string();
}

torch::Device parse_device(const std::string& name) {
  if (name == "cuda") {
    if (!torch::cuda::is_available()) {
      throw Error("run.device is 'cuda' but this LibTorch build sees no CUDA device");
    }
    return torch::Device(torch::kCUDA);
  }
  return torch::Device(torch::kCPU);
}

void check_model_options(const SiftConfig& config) {
  const ModelSpec& spec = find_model(config.model.type);
  for (const auto& [key, origin] : config.origin) {
    if (key.rfind("model.", 0) != 0 || key == "model.type") continue;
    if (std::find(spec.options.begin(), spec.options.end(), key) == spec.options.end()) {
      throw Error(fmt::format("{}: option '{}' does not apply to model '{}' (its options: {})",
                              origin, key, spec.name, fmt::join(spec.options, ", ")));
    }
  }
}

Classifier create_model(const SiftConfig& config, const Task& task) {
  const ModelSpec& spec = find_model(config.model.type);
  ModelShape shape;
  TextEncoder encoder = make_encoder(task);
  shape.num_ids = encoder.num_ids();
  shape.num_classes = task.labels.size();
  shape.vocab = task.vocab;
  const auto& o = config.train.optimizer;
  shape.sparse_gradients = o.type == "sgd" && o.momentum == 0.0 && o.weight_decay == 0.0;
  return spec.create(config.model, shape);
}

Checkpoint load_run_weights(const std::string& run_dir, std::string* path_out) {
  std::string path = run_file(run_dir, "best.ckpt");
  if (!std::filesystem::exists(path)) path = run_file(run_dir, "last.ckpt");
  Checkpoint checkpoint = load_checkpoint(path);
  if (checkpoint.meta.contains("weights_in")) {  // best.ckpt naming last.ckpt's weights
    const std::string last_path =
        run_file(run_dir, checkpoint.meta["weights_in"].get<std::string>());
    Checkpoint last = load_checkpoint(last_path);
    if (last.meta.value("step", int64_t{-1}) != checkpoint.meta.value("step", int64_t{-2})) {
      throw Error(fmt::format("{} names the weights of {} at step {}, but that file is at step {}",
                              path, last_path, checkpoint.meta.value("step", int64_t{-2}),
                              last.meta.value("step", int64_t{-1})));
    }
    checkpoint.blobs["model"] = std::move(last.blobs["model"]);
  }
  if (!checkpoint.blobs.count("model")) throw Error(fmt::format("{} holds no model weights", path));
  if (path_out != nullptr) *path_out = path;
  return checkpoint;
}

ModelBundle load_run(const std::string& run_dir, const std::vector<std::string>& overrides) {
  if (!std::filesystem::is_directory(run_dir)) {
    throw Error(fmt::format("{} is not a run folder (no such directory)", run_dir));
  }
  ModelBundle b;
  b.run_dir = run_dir;
  b.config = load_config(run_file(run_dir, "config.yaml"), overrides);
  b.task.labels = LabelSet::load(run_file(run_dir, "labels.txt"));
  b.task.vocab = std::make_shared<Vocab>(Vocab::load(run_file(run_dir, "vocab.txt")));
  b.task.encoder = encoder_options(b.config);
  if (b.config.tokenizer.type == "sentencepiece") {
    b.task.pieces = SentencePieceModel::open(run_file(run_dir, "tokenizer.model"));
  }
  std::string path;
  const Checkpoint checkpoint = load_run_weights(run_dir, &path);
  if (checkpoint.meta.value("model", "") != b.config.model.type) {
    throw Error(fmt::format("{} holds a '{}' model, but the run's config says '{}'", path,
                            checkpoint.meta.value("model", "?"), b.config.model.type));
  }
  // The weights come from the checkpoint: word vectors need not be read (or still exist).
  SiftConfig model_config = b.config;
  model_config.model.pretrained.clear();
  b.model = create_model(model_config, b.task);
  load_module_bytes(*b.model, checkpoint.blobs.at("model"), path);
  b.device = parse_device(b.config.run.device);
  b.model->to(b.device);
  b.model->eval();
  return b;
}

ModelInput to_input(const RawBatch& batch, InputKind kind, torch::Device device) {
  auto opts = torch::TensorOptions().dtype(torch::kInt64);
  ModelInput input;
  if (kind == InputKind::sequence) {
    const int64_t n = batch.size();
    const auto total = static_cast<int64_t>(batch.ids.size());
    std::vector<int64_t> lengths(n);
    int64_t longest = 1;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t end = i + 1 < n ? batch.offsets[i + 1] : total;
      lengths[i] = std::max<int64_t>(end - batch.offsets[i], 1);
      longest = std::max(longest, lengths[i]);
    }
    auto ids = torch::zeros({n, longest}, opts);
    int64_t* out = ids.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t end = i + 1 < n ? batch.offsets[i + 1] : total;
      std::copy(batch.ids.begin() + batch.offsets[i], batch.ids.begin() + end, out + i * longest);
    }
    input.ids = ids.to(device);
    input.lengths = torch::tensor(lengths, opts);  // kept on the CPU, as packing wants
    return input;
  }
  input.ids = torch::from_blob(const_cast<int64_t*>(batch.ids.data()),
                               {static_cast<int64_t>(batch.ids.size())}, opts)
                  .to(device, /*non_blocking=*/false, /*copy=*/true);
  input.offsets = torch::from_blob(const_cast<int64_t*>(batch.offsets.data()),
                                   {static_cast<int64_t>(batch.offsets.size())}, opts)
                      .to(device, false, true);
  return input;
}

Evaluation evaluate(Classifier& model, ShardedStream& batches, InputKind kind, int64_t classes,
                    torch::Device device) {
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  Evaluation result{ConfusionMatrix(classes), 0.0};
  double loss_sum = 0.0;
  RawBatch batch;
  batches.start_epoch(1);
  while (batches.next(batch)) {
    auto logits = model->forward(to_input(batch, kind, device));
    auto labels = torch::from_blob(batch.labels.data(), {batch.size()}, torch::kInt64).to(device);
    loss_sum += torch::nn::functional::cross_entropy(
                    logits, labels,
                    torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .item<double>();
    auto predicted = logits.argmax(1).to(torch::kCPU);
    const int64_t* p = predicted.data_ptr<int64_t>();
    for (int64_t i = 0; i < batch.size(); ++i) result.confusion.add(batch.labels[i], p[i]);
  }
  if (result.confusion.total() > 0) result.loss = loss_sum / result.confusion.total();
  if (was_training) model->train();
  return result;
}

}  // namespace sift
