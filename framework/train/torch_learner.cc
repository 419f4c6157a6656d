#include "framework/train/torch_learner.h"

#include <fmt/format.h>
#include <torch/version.h>

#include <cmath>

#include "core/error.h"
#include "framework/runtime/evaluation.h"
#include "framework/runtime/run_folder.h"
#include "framework/train/distill.h"
#include "framework/train/distributed_training.h"
#include "framework/train/nonfinite.h"
#include "framework/train/optimization.h"
#include "framework/train/run_report.h"
#include "framework/train/saving.h"
#include "framework/train/step.h"

namespace sift {
namespace {

// Opens the streams of distillation's transfer set, each at its saved position on resume
// (run.transfer_states) or at the start of its first epoch.
void open_transfer(Run& run, const TextEncoder& encoder) {
  run.transfer.clear();
  for (const auto& source : run.plan.data.transfer) {
    TransferStream t{source.name,
                     open_transfer_stream(source, encoder, run.task.labels, run.teacher->encoder,
                                          run.dist->rank(), run.dist->world_size())};
    const auto saved = run.transfer_states.find(source.name);
    if (saved != run.transfer_states.end()) {
      try {
        t.stream->restore_state(saved->second);
      } catch (const Error& e) {  // "shard x is missing since the checkpoint; ..."
        throw Error(fmt::format("{}: {}", source.source.key, e.what()));
      }
    } else {
      t.stream->start_epoch(1);
    }
    run.transfer.push_back(std::move(t));
  }
}

int64_t transfer_rows(const Run& run, const std::string& name) {
  for (const auto& source : run.plan.data.transfer) {
    if (source.name == name) return source.stream.batch_size;
  }
  return 0;
}

}  // namespace

void TorchLearner::start(const TextEncoder& encoder) {
  open_transfer(run_, encoder);
  run_.model->train();
  run_.optimizer->zero_grad();
}

const TextEncoder* TorchLearner::teacher_encoder() const {
  return run_.teacher ? &run_.teacher->encoder : nullptr;
}

bool TorchLearner::next_batch(ShardedStream& stream, RawBatch& batch) {
  return sift::next_batch(run_, stream, batch);
}

Learner::Stepped TorchLearner::step(const RawBatch& batch, double lr, bool logs) {
  if (run_.fused) {
    run_.grad_norm = std::nan("");  // not computed there
    return {fused_sgd_step(*run_.fused, batch, lr, run_, run_.nonfinite_in_a_row), true};
  }
  set_lr(*run_.optimizer, lr);
  const double loss = accumulate_batch(run_, batch);
  if (++micro_ < run_.plan.train.accumulate) return {loss, false};
  micro_ = 0;
  run_.log_this_step = logs;
  optimizer_step(run_);
  return {loss, true};
}

void TorchLearner::end_steps() {
  run_.log_this_step = false;
  if (micro_ > 0) optimizer_step(run_);  // the epoch's last, partial accumulation
  micro_ = 0;
}

double TorchLearner::loss_scale() const {
  return run_.scaler.enabled() ? run_.scaler.scale() : std::nan("");
}

std::unique_ptr<FusedSgd> TorchLearner::make_fused() {
  return find_model(run_.plan.model.type).fused_sgd(*run_.model);
}

Evaluation TorchLearner::evaluate(ShardedStream& stream, ConfusedExamples* confused) {
  Evaluation e = sift::evaluate(run_.model, stream, run_.task.encoder.kind,
                                run_.task.labels.size(), run_.device, run_.plan.labels, confused);
  reduce_evaluation(*run_.dist, e);
  run_.model->train();
  return e;
}

void TorchLearner::add_to_record(nlohmann::json& record) const {
  if (!run_.scaler.enabled()) return;
  record["loss_scale"] = run_.scaler.scale();
  record["skipped_steps"] = run_.scaler.skipped_steps();
}

std::string TorchLearner::not_a_best(int64_t step) const {
  // While pruning is on its way the weights are not those the run ends with.
  if (run_.pruner && !run_.pruner->at_final_sparsity(step)) {
    return " (before the final sparsity: not a best candidate)";
  }
  return "";
}

int64_t TorchLearner::bytes() const {
  int64_t bytes = 0;
  for (const auto& named : named_tensors(*run_.model)) bytes += named.second.nbytes();
  return bytes;
}

bool TorchLearner::weights_finite() const { return tensors_finite(run_.model->parameters()); }

bool TorchLearner::best_to_disk() const {
  // A table that began as a fill is written as its changed rows; every rank of a group
  // would have to read it back.
  return !run_.dist->is_group() && !run_.model->initial_fills().empty();
}

void TorchLearner::copy_best() {
  torch::NoGradGuard no_grad;
  const NamedTensors current = named_tensors(*run_.model);
  auto& best = run_.best_weights;
  if (best.empty()) {
    for (const auto& [name, w] : current) best.emplace_back(name, w.detach().clone());
  } else {
    for (size_t i = 0; i < current.size(); ++i) best[i].second.copy_(current[i].second);
  }
}

void TorchLearner::restore_best_copy() {
  if (run_.best_weights.empty()) return;
  torch::NoGradGuard no_grad;
  const NamedTensors current = named_tensors(*run_.model);
  for (size_t i = 0; i < current.size(); ++i) current[i].second.copy_(run_.best_weights[i].second);
}

void TorchLearner::load_weights(const std::string& path) {
  const Checkpoint c = load_checkpoint(path, {"optimizer"});
  run_.model->remember_fills(load_model_weights(*run_.model, c, path));
}

void TorchLearner::add_rank_blobs(std::map<std::string, std::string>& blobs) {
  blobs["rng"] = rng_state();
  // The transfer set's streams run across epochs: their positions are saved at each save.
  for (const auto& t : run_.transfer) blobs[transfer_blob(t.name)] = t.stream->save_state();
}

void TorchLearner::write(const std::string& path, const nlohmann::json& meta,
                         const std::map<std::string, std::string>& blobs, Saved what) {
  Checkpoint c;
  c.meta = meta;
  // Serialised while the file is written (a device's tensors are copied to the CPU).
  if (what != Saved::best_named) {
    c.tensor_blobs["model"] =
        what == Saved::best_copy ? run_.best_weights : named_tensors(*run_.model);
    c.fills["model"] = run_.model->initial_fills();
  }
  // best.ckpt is chosen at the final sparsity only, so the masks are those of now.
  if (run_.pruner) c.tensor_blobs[kPruneMasksSection] = run_.pruner->masks();
  if (what == Saved::last) {
    c.blobs["optimizer"] = optimizer_bytes(*run_.optimizer);
    if (run_.scaler.enabled()) c.meta["loss_scaler"] = run_.scaler.state();
  }
  for (const auto& [name, bytes] : blobs) c.blobs[name] = bytes;
  save_checkpoint(path, c);
}

void TorchLearner::add_summary(nlohmann::json& train, Progress& progress) {
  if (run_.scaler.skipped_steps() > 0) {
    progress.log(fmt::format("loss scaling skipped {} steps with inf/nan gradients (scale now {})",
                             run_.scaler.skipped_steps(), run_.scaler.scale()));
  }
  if (run_.dist->is_group()) {
    train["world_size"] = run_.dist->world_size();
    train["allreduce_seconds"] = run_.dist->gradient_seconds();
    train["allreduce_calls"] = run_.dist->gradient_calls();
  }
  for (const auto& transfer : run_.transfer) {
    train["transfer"][transfer.name] = {{"rows_per_batch", transfer_rows(run_, transfer.name)},
                                        {"epoch", transfer.stream->epoch()}};
  }
  run_.transfer.clear();  // their readers stop here; the encoders they hold are the loop's
}

void TorchLearner::add_report(nlohmann::json& train, std::string& text) const {
  if (!run_.pruner) return;
  train["pruning"] = run_.pruner->report();
  text += run_.pruner->report_text();
}

nlohmann::json TorchLearner::environment(const std::string& dir) const {
  return run_environment({"sift-main", TORCH_VERSION, run_.device.str(), at::get_num_threads(),
                          run_.dist->world_size(), run_.plan.data.train_stream.workers,
                          run_file(dir, kConfigFile)});
}

}  // namespace sift
