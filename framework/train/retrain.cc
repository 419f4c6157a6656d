#include "framework/train/retrain.h"

#include <fmt/format.h>

#include <iostream>
#include <limits>

#include "framework/runtime/base/task.h"
#include "framework/runtime/collate.h"
#include "framework/runtime/compute_threads.h"
#include "framework/runtime/loss.h"
#include "framework/train/base/run_plan.h"
#include "framework/train/optimization.h"

namespace sift {
namespace {

// The batch with the ids of rows not kept taken out of their bags.
void drop_unkept_ids(RawBatch& batch, const bool* kept) {
  std::vector<int64_t> ids, offsets;
  ids.reserve(batch.ids.size());
  for (int64_t i = 0; i < batch.size(); ++i) {
    offsets.push_back(static_cast<int64_t>(ids.size()));
    for (int64_t j = batch.offsets[static_cast<size_t>(i)]; j < batch.ids_end(i); ++j) {
      const int64_t id = batch.ids[static_cast<size_t>(j)];
      if (kept[id]) ids.push_back(id);
    }
  }
  batch.ids = std::move(ids);
  batch.offsets = std::move(offsets);
}

// The optimizer steps of the whole retraining, for the schedule: the training records
// recorded in the run's checkpoint (0 when it has none: the schedule stays at its start).
int64_t total_steps(const ModelBundle& bundle, const TrainConfig& t) {
  const auto records = load_run_weights(bundle.run_dir).meta.value("train_records", uint64_t{0});
  const auto batches = (static_cast<int64_t>(records) + t.batch_size - 1) / t.batch_size;
  return batches > 0 ? batches * t.epochs : std::numeric_limits<int32_t>::max();
}

}  // namespace

RetrainSummary retrain_kept_rows(ModelBundle& bundle, const RetrainOptions& options) {
  const RunPlan plan = resolve_run(bundle.config);
  const TrainConfig& train = plan.train;
  apply_threads(plan.threads);
  const torch::Tensor kept = options.kept.to(torch::kCPU, torch::kBool).contiguous();
  torch::nn::Module& model = *bundle.model;
  model.to(torch::kCPU);
  std::vector<torch::Tensor> params;
  for (auto& p : model.named_parameters()) {
    if (p.key() == options.table && !options.rows) {
      p.value().set_requires_grad(false);
    } else {
      params.push_back(p.value());
    }
  }
  auto optimizer = create_optimizer(train.optimizer, params);
  const TextEncoder encoder = make_encoder(bundle.task);
  auto stream = open_stream(plan.data, Split::train, encoder, bundle.task.labels, true);
  const LossOptions& loss = plan.loss;  // without class weights, as the old loss_options({})
  const int64_t total = total_steps(bundle, train);
  RetrainSummary s;
  model.train();
  RawBatch batch;
  for (int64_t epoch = 1; epoch <= train.epochs; ++epoch) {
    stream->start_epoch(static_cast<uint64_t>(epoch));
    double loss_sum = 0.0;
    int64_t examples = 0;
    while (stream->next(batch)) {
      drop_unkept_ids(batch, kept.data_ptr<bool>());
      set_lr(*optimizer, scheduled_lr(train, s.steps, total));
      optimizer->zero_grad();
      const torch::Tensor logits =
          bundle.model->forward(to_input(batch, bundle.task.encoder.kind, torch::kCPU));
      const torch::Tensor l = batch_loss(logits, batch, loss);
      l.backward();
      optimizer->step();
      ++s.steps;
      loss_sum += l.item<double>() * (loss.sum ? 1.0 : static_cast<double>(batch.size()));
      examples += batch.size();
    }
    s.examples += examples;
    s.last_epoch_loss = examples > 0 ? loss_sum / static_cast<double>(examples) : 0.0;
    ++s.epochs;
    if (!options.quiet) {
      std::cerr << fmt::format("retrain: epoch {}/{}, loss {:.4f}\n", epoch, train.epochs,
                               s.last_epoch_loss);
    }
  }
  for (auto& p : model.named_parameters()) p.value().set_requires_grad(true);
  model.eval();
  return s;
}

}  // namespace sift
