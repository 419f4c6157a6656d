// Everything one sift-main training run holds: made by setup.cc, trained by train_loop.h
// through trainer.cc's learner, resumed by saving.cc.
#pragma once

#include <torch/torch.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "config/config.h"
#include "datasets/masked_lm.h"
#include "framework/runtime/checkpoint.h"
#include "framework/train/base/run_plan.h"
#include "framework/train/base/train_loop.h"
#include "framework/train/distributed.h"
#include "framework/train/layer_shards.h"
#include "framework/train/precision.h"
#include "framework/train/pruning.h"
#include "framework/train/sharding.h"
#include "models/model.h"

namespace sift {

struct Teacher;  // distill.h

// A stream of distillation's transfer set (data_plan.h TransferSource), opened by the
// LibTorch learner (torch_learner.cc), whose next_batch appends its next batch to each
// labelled one.
struct TransferStream {
  std::string name;  // TransferSource::name
  std::unique_ptr<ShardedStream> stream;
};

// What the loop holds (RunCore: options, run folder, task, counters, best, logs), and
// the LibTorch model, its optimizer and process group.
struct Run : RunCore {
  Classifier model{nullptr};
  // run.shard: the optimizer state of this rank's slice, which steps instead of
  // `optimizer` (null: none). `optimizer` then holds no state except while a save or a
  // resume passes the whole state through it in its ordinary layout.
  std::unique_ptr<ShardedOptimizer> shards;
  // run.shard: parameters: the layers' parameters, gathered and freed around their uses
  // (null: whole). Declared after `shards`, whose pieces it reads, so it goes first.
  std::unique_ptr<LayerShards> layers;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  // Each parameter group's share of the scheduled learning rate (param_groups.h).
  std::vector<double> lr_scales;
  // train.fast_path: whether the run takes the fused SGD step (the fastText learner over
  // the model's tensors, fasttext_learner.h; else autograd), and the report's words for
  // the path taken (fast_path.h).
  bool fused = false;
  std::string training_path;
  torch::Device device{torch::kCPU};  // plan.device's
  // train.class_weights on `device` (undefined: none): batch_loss's weights.
  torch::Tensor class_weights;
  std::shared_ptr<Teacher> teacher;      // train.distill.teacher (null: no distillation)
  std::vector<TransferStream> transfer;  // train.distill.unlabeled, augment (empty: none)
  // Resume: the transfer streams' positions last.ckpt holds, by name (restore_last).
  std::map<std::string, std::string> transfer_states;
  // The weights of the best validation so far, kept in memory when training goes on past
  // them (BestState::on_disk says when best.ckpt holds them instead): writing every
  // improvement to disk would cost more than training small models.
  NamedTensors best_weights;
  LossScaler scaler;                  // train.loss_scaling; disabled by default
  std::shared_ptr<Distributed> dist;  // a group of one in a single process
  double loss_scale = 1.0;            // this rank's share of a batch spread over ranks
  bool data_done = false;             // this rank's training data ended this epoch
  bool losses_finite = true;          // this rank's losses since the last optimizer step
  int64_t nonfinite_in_a_row = 0;     // skip_batch: skipped steps since the last taken one
  bool log_this_step = false;         // the step in progress gets a metrics.csv row
  double grad_norm = 0.0;             // its gradients' L2 norm (NaN: not measured or skipped)
  std::unique_ptr<Pruner> pruner;     // train.prune; null when nothing is pruned
  // Masked-token pretraining (pretrain.files): the vocabulary's special, continuation and
  // [MASK] ids; absent: classification.
  std::optional<MaskingVocab> masking;
  // train.init_from: whether the output layer was kept or started anew (fine_tuning.h).
  std::string init_note;
};

}  // namespace sift
