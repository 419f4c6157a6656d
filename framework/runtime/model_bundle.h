// A trained model with everything needed to use it (config, labels, vocabulary,
// encoder), as saved in a run folder; and evaluation over a batch stream.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>

#include "datasets/batch.h"
#include "datasets/sharded_stream.h"
#include "framework/runtime/checkpoint.h"
#include "config/config.h"
#include "framework/runtime/metrics.h"
#include "framework/runtime/multilabel_metrics.h"
#include "framework/runtime/task.h"
#include "models/model.h"

namespace sift {

struct ModelBundle {
  std::string run_dir;
  SiftConfig config;
  Task task;
  Classifier model{nullptr};
  torch::Device device{torch::kCPU};
};

// Files of a run folder.
std::string run_file(const std::string& run_dir, const std::string& name);

// The model weights of a run folder: best.ckpt (which may name last.ckpt's weights), else
// last.ckpt. `path` receives the file they came from.
Checkpoint load_run_weights(const std::string& run_dir, std::string* path = nullptr);

// Loads config.yaml, labels.txt, vocab.txt and best.ckpt (last.ckpt when there is no
// best) from a run folder. `overrides` are --set assignments applied to its config.
ModelBundle load_run(const std::string& run_dir, const std::vector<std::string>& overrides = {});

// validate() against the registered models: among others, refuses model.* keys given
// explicitly that the chosen model does not read.
void check_model_options(const SiftConfig& config);

// Builds the model a config and task describe (weights freshly initialised).
Classifier create_model(const SiftConfig& config, const Task& task);

torch::Device parse_device(const std::string& name);

// Moves a batch's vectors into tensors on `device`, as the model's input kind needs.
ModelInput to_input(const RawBatch& batch, InputKind kind, torch::Device device);

// Single-label (softmax, argmax) or multi-label (sigmoid, threshold) evaluation.
struct LabelMode {
  bool multi_label = false;
  double threshold = 0.5;
};
LabelMode label_mode(const SiftConfig& config);

struct Evaluation {
  ConfusionMatrix confusion;  // single-label
  MultiLabelCounts multi;     // multi-label
  bool multi_label = false;
  double loss = 0.0;  // mean loss per example (cross-entropy, or BCE summed over labels)

  int64_t examples() const { return multi_label ? multi.examples() : confusion.total(); }
  // The split's report: metrics, per-class table (and the confusion matrix).
  nlohmann::json to_json(const std::vector<std::string>& names) const;
  std::string to_text(const std::vector<std::string>& names) const;
  // The headline figures: loss, accuracy, macro_f1 (multi-label also micro_f1, hamming_loss).
  nlohmann::json summary() const;
  std::string headline() const;  // "accuracy 0.9000, macro-F1 0.8000, loss 0.3000"
};

// Runs the model in eval mode over one pass of `batches`.
Evaluation evaluate(Classifier& model, ShardedStream& batches, InputKind kind, int64_t classes,
                    torch::Device device, LabelMode mode = {});

}  // namespace sift
