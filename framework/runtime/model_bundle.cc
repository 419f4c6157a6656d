#include "framework/runtime/model_bundle.h"

#include <fmt/format.h>

#include <filesystem>

#include "datasets/stopwords.h"
#include "framework/runtime/checkpoint.h"
#include "config/loader.h"
#include "config/validate.h"
#include "core/error.h"
#include "framework/runtime/loss.h"

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

void check_model_options(const SiftConfig& config) { validate(config, model_traits()); }

Classifier create_model(const SiftConfig& config, const Task& task) {
  const ModelSpec& spec = find_model(config.model.type);
  ModelShape shape;
  TextEncoder encoder = make_encoder(task);
  shape.num_ids = encoder.num_ids();
  shape.num_classes = task.labels.size();
  shape.vocab = task.vocab;
  const auto& o = config.train.optimizer;
  shape.sparse_gradients = o.type == OptimizerType::sgd && o.momentum == 0.0 && o.weight_decay == 0.0;
  return spec.create(config.model, shape);
}

Checkpoint load_run_weights(const std::string& run_dir, std::string* path_out) {
  // Weights and optimizer state stay on disk: the weights are read straight into the
  // model (load_model_weights), the optimizer state is not needed here.
  const std::vector<std::string> on_disk = {"model", "optimizer"};
  std::string path = run_file(run_dir, "best.ckpt");
  if (!std::filesystem::exists(path)) path = run_file(run_dir, "last.ckpt");
  Checkpoint checkpoint = load_checkpoint(path, on_disk);
  if (checkpoint.meta.contains("weights_in")) {  // best.ckpt naming last.ckpt's weights
    const std::string last_path =
        run_file(run_dir, checkpoint.meta["weights_in"].get<std::string>());
    Checkpoint last = load_checkpoint(last_path, on_disk);
    if (last.meta.value("step", int64_t{-1}) != checkpoint.meta.value("step", int64_t{-2})) {
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
  b.config = load_config(run_file(run_dir, "config.yaml"), overrides);
  b.task.labels = LabelSet::load(run_file(run_dir, "labels.txt"));
  b.task.vocab = std::make_shared<Vocab>(Vocab::load(run_file(run_dir, "vocab.txt")));
  SiftConfig encoder_config = b.config;
  // The run keeps the stop words it was trained with: the original file may be gone.
  if (!encoder_config.tokenizer.stopwords.empty()) {
    encoder_config.tokenizer.stopwords = run_file(run_dir, kStopwordsFile);
  }
  b.task.encoder = encoder_options(encoder_config);
  if (b.config.tokenizer.type == TokenizerType::sentencepiece) {
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
  load_model_weights(*b.model, checkpoint, path);
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

LabelMode label_mode(const SiftConfig& config) {
  return {config.data.multi_label, config.train.threshold};
}

nlohmann::json Evaluation::to_json(const std::vector<std::string>& names) const {
  return multi_label ? multi.to_json(names) : confusion.to_json(names);
}

std::string Evaluation::to_text(const std::vector<std::string>& names) const {
  return multi_label ? multi.to_text(names) : confusion.to_text(names);
}

nlohmann::json Evaluation::summary() const {
  if (!multi_label) {
    return {{"loss", loss}, {"accuracy", confusion.accuracy()}, {"macro_f1", confusion.macro_f1()}};
  }
  return {{"loss", loss},
          {"accuracy", multi.subset_accuracy()},
          {"macro_f1", multi.macro_f1()},
          {"micro_f1", multi.micro_f1()},
          {"hamming_loss", multi.hamming_loss()}};
}

std::string Evaluation::headline() const {
  const nlohmann::json s = summary();
  std::string line = fmt::format("accuracy {:.4f}, macro-F1 {:.4f}", s["accuracy"].get<double>(),
                                 s["macro_f1"].get<double>());
  if (multi_label) line += fmt::format(", micro-F1 {:.4f}", s["micro_f1"].get<double>());
  return line + fmt::format(", loss {:.4f}", loss);
}

namespace {

// Multi-label: labels whose probability exceeds the threshold, against the true sets.
void count_multi_label(const torch::Tensor& logits, const RawBatch& batch, double threshold,
                       MultiLabelCounts& counts) {
  const int64_t classes = logits.size(1);
  auto predicted = (torch::sigmoid(logits.to(torch::kFloat32)) > threshold)
                       .to(torch::kCPU, torch::kUInt8)
                       .contiguous();
  auto truth = multi_hot(batch, classes).to(torch::kUInt8);
  const uint8_t* p = predicted.data_ptr<uint8_t>();
  const uint8_t* t = truth.data_ptr<uint8_t>();
  for (int64_t i = 0; i < batch.size(); ++i) counts.add(t + i * classes, p + i * classes);
}

}  // namespace

Evaluation evaluate(Classifier& model, ShardedStream& batches, InputKind kind, int64_t classes,
                    torch::Device device, LabelMode mode) {
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  Evaluation result{ConfusionMatrix(mode.multi_label ? 0 : classes),
                    MultiLabelCounts(mode.multi_label ? classes : 0), mode.multi_label, 0.0};
  LossOptions loss_options;
  loss_options.multi_label = mode.multi_label;
  loss_options.sum = true;
  double loss_sum = 0.0;
  RawBatch batch;
  batches.start_epoch(1);
  while (batches.next(batch)) {
    auto logits = model->forward(to_input(batch, kind, device));
    loss_sum += batch_loss(logits, batch, loss_options).item<double>();
    if (mode.multi_label) {
      count_multi_label(logits, batch, mode.threshold, result.multi);
      continue;
    }
    auto predicted = logits.argmax(1).to(torch::kCPU);
    const int64_t* p = predicted.data_ptr<int64_t>();
    for (int64_t i = 0; i < batch.size(); ++i) result.confusion.add(batch.labels[i], p[i]);
  }
  if (result.examples() > 0) result.loss = loss_sum / static_cast<double>(result.examples());
  if (was_training) model->train();
  return result;
}

}  // namespace sift
