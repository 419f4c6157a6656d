// Everything one training run holds: made by setup.cc, driven by trainer.cc's loop,
// saved by saving.cc.
#pragma once

#include <torch/torch.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "config/config.h"
#include "framework/runtime/checkpoint.h"
#include "framework/runtime/run_folder.h"
#include "framework/runtime/task.h"
#include "framework/train/distributed.h"
#include "framework/train/phases.h"
#include "framework/train/precision.h"
#include "framework/train/pruning.h"
#include "framework/train/run_plan.h"
#include "framework/train/step_log.h"
#include "framework/train/train_options.h"
#include "framework/train/training_state.h"
#include "models/model.h"

namespace sift {

struct Teacher;  // distill.h

// The weights of the best validation so far, kept in memory: writing every improvement
// to disk would cost more than training small models.
struct BestWeights : BestState {
  NamedTensors weights;  // a copy, made only when training goes on past the best
};

// A stream of distillation's transfer set (data_plan.h TransferSource), opened by the
// epoch loop; next_batch appends its next batch to each labelled one.
struct TransferStream {
  std::string name;  // TransferSource::name
  std::unique_ptr<ShardedStream> stream;
};

struct Run {
  RunPlan plan;  // the run's options, resolved once (run_plan.h)
  TrainOptions options;
  std::string dir;
  std::unique_ptr<RunFolderLock> lock;  // rank 0's, on the run folder it writes
  nlohmann::json file_hashes;           // run_file_hashes, recorded in every checkpoint (rank 0)
  std::vector<std::string> data_changed_on_resume;  // keys --allow-data-change let through
  Task task;
  Classifier model{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  // train.fast_path: the fused SGD step when the run takes it (null: autograd), and the
  // report's words for the path taken (fast_path.h).
  std::unique_ptr<FusedSgd> fused;
  std::string training_path;
  torch::Device device{torch::kCPU};
  std::shared_ptr<Teacher> teacher;      // train.distill.teacher (null: no distillation)
  std::vector<TransferStream> transfer;  // train.distill.unlabeled, augment (empty: none)
  // Resume: the transfer streams' positions last.ckpt holds, by name (restore_last).
  std::map<std::string, std::string> transfer_states;
  TrainingState state;
  BestWeights best;
  LossScaler scaler;                  // train.loss_scaling; disabled by default
  std::shared_ptr<Distributed> dist;  // a group of one in a single process
  double loss_scale = 1.0;            // this rank's share of a batch spread over ranks
  bool data_done = false;             // this rank's training data ended this epoch
  bool losses_finite = true;          // this rank's losses since the last optimizer step
  int64_t nonfinite_in_a_row = 0;     // skip_batch: skipped steps since the last taken one
  PhaseTimes phases;                  // where the time went (report.json's "phases")
  StepLog step_log;                   // metrics.csv (rank 0 writes)
  bool log_this_step = false;         // the step in progress gets a metrics.csv row
  double grad_norm = 0.0;             // its gradients' L2 norm (NaN: not measured or skipped)
  std::unique_ptr<Pruner> pruner;     // train.prune; null when nothing is pruned
};

}  // namespace sift
