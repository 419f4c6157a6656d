// The optimizer's parameter groups: what fine-tuning an encoder needs beyond one learning
// rate for everything. adamw with weight decay leaves biases and LayerNorm weights
// undecayed (BERT's recipe: decaying a norm's gain or a bias only pulls it towards zero),
// and train.optimizer.layer_decay gives each layer of an encoder its own share of the
// learning rate (lower layers, which hold the pretrained features, move least).
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "models/model.h"

namespace sift {

struct ParamGroup {
  std::vector<torch::Tensor> params;
  double lr_scale = 1.0;  // the group's learning rate is the schedule's times this
  bool decay = true;      // false: weight_decay 0 for this group
  std::string name;       // "layers.1, no decay": for tests and the log
};

// The trainable parameters of `model` (frozen ones left out, each group in the model's
// parameter order) in as few groups as the options ask for: one when neither applies, so
// that a run without them steps exactly as before. Throws sift::Error naming
// train.optimizer.layer_decay when it is below 1 for a model without a stack of layers.
std::vector<ParamGroup> param_groups(const ClassifierImpl& model, const OptimizerConfig& o);

// Each group's lr_scale, in order: what set_lr multiplies the scheduled rate by.
std::vector<double> lr_scales(const std::vector<ParamGroup>& groups);

}  // namespace sift
