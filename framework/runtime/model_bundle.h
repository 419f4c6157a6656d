// A trained model with everything needed to use it (config, labels, vocabulary,
// encoder), as saved in a run folder; and the model a config describes.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "framework/runtime/base/run_weights.h"
#include "framework/runtime/base/task.h"
#include "framework/runtime/checkpoint.h"
#include "framework/runtime/loss.h"
#include "models/model.h"

namespace sift {

struct ModelBundle {
  std::string run_dir;
  SiftConfig config;
  Task task;
  Classifier model{nullptr};
  torch::Device device{torch::kCPU};
};

// Loads config.yaml, labels.txt, vocab.txt and best.ckpt (last.ckpt when there is no
// best) from a run folder. `overrides` are --set assignments applied to its config.
ModelBundle load_run(const std::string& run_dir, const std::vector<std::string>& overrides = {});

// Throws sift::Error when `bundle` is a `sift pretrain` run (an encoder without classes),
// which predict, eval, serve and a teacher cannot use; resume, init_from and export (of
// the encoder alone) can.
void check_classifier(const ModelBundle& bundle);

// Builds the model `model` and the task describe (weights freshly initialised), with
// sparse embedding gradients when the model has them and `optimizer` is plain SGD, and
// the output layer `loss` names (train.loss, train.neg; hs and ns read task.label_counts).
Classifier create_model(const ModelConfig& model, const OptimizerConfig& optimizer,
                        const Task& task, const LossOptions& loss = {});

}  // namespace sift
