#include "framework/train/torch_learner.h"

#include <fmt/format.h>
#include <torch/version.h>

#include <cmath>
#include <optional>

#include "core/error.h"
#include "core/out_of_memory.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/runtime/collate.h"
#include "framework/runtime/evaluation.h"
#include "framework/runtime/loss.h"
#include "framework/train/base/fasttext_learner.h"
#include "framework/train/base/run_report.h"
#include "framework/train/distill.h"
#include "framework/train/distributed_training.h"
#include "framework/train/max_norm.h"
#include "framework/train/nonfinite.h"
#include "framework/train/optimization.h"
#include "framework/train/pretraining.h"
#include "framework/train/rank_figures.h"
#include "framework/train/saving.h"
#include "models/autocast.h"
#include "models/base/traits.h"

namespace sift {
namespace {

// Appends each transfer stream's next batch (train.distill.unlabeled, augment) to a
// labelled one; a stream that ends starts its next epoch.
void append_transfer(Run& run, RawBatch& batch) {
  RawBatch more;
  for (auto& t : run.transfer) {
    if (!t.stream->next(more)) {
      t.stream->start_epoch(t.stream->epoch() + 1);
      if (!t.stream->next(more)) {
        throw Error(fmt::format("train.distill.{}: {}",
                                t.name == "augment" ? "augment.copies" : t.name,
                                empty_split_message("distillation's " + t.name, *t.stream)));
      }
    }
    batch.append(more);
  }
}

// The next batch. In a group: true while any rank has one (a rank out of data gets an
// empty batch), and run.loss_scale becomes the factor that makes the averaged gradient
// that of all ranks' examples together, as one process with the whole batch would
// compute it.
bool next_batch(Run& run, ShardedStream& stream, RawBatch& batch) {
  const bool has = !run.data_done && stream.next(batch);
  if (!has) {
    run.data_done = true;
    batch.clear();
  } else {
    append_transfer(run, batch);
  }
  const BatchAgreement all = run.dist->agree_on_batch(has, batch.size());
  run.loss_scale = rank_loss_scale(run.plan.train.loss_reduction, batch.size(), all.examples,
                                   run.dist->world_size());
  return all.any;
}

// alpha * hard + (1 - alpha) * soft (train.distill); counts the soft loss for metrics.csv.
torch::Tensor with_distillation(Run& run, const torch::Tensor& hard, const torch::Tensor& logits,
                                const torch::Tensor& teacher, int64_t examples) {
  const auto& d = run.plan.train.distill;
  const bool sum = run.plan.loss.sum;
  const DistilledLoss loss =
      distilled_loss(hard, logits, teacher, d.alpha, d.temperature, run.plan.data.multi_label, sum);
  const double soft = loss.soft.item<double>() / (sum ? static_cast<double>(examples) : 1.0);
  run.step_log.count_distill(examples, soft);
  return loss.total;
}

// The keys that size a batch's activations: a Transformer batch of 20,000 texts of 2,000
// tokens asked LibTorch for 4.0 GB and ended with its bare "can't allocate memory".
std::string batch_keys(const RunPlan& plan) {
  return plan.given.data.max_tokens > 0 ? "train.batch_size, data.max_tokens"
                                        : "train.batch_size, data.max_length";
}

// A labelled batch's loss (with distillation's soft part), timed as copy, teacher and forward.
torch::Tensor classification_loss(Run& run, const RawBatch& batch,
                                  std::optional<PhaseTimer>& timer) {
  const ModelInput input = to_input(batch, run.task.encoder.kind, run.device);
  torch::Tensor teacher;
  if (run.teacher) {
    timer.emplace(run.phases, Phase::teacher);
    teacher = teacher_logits(*run.teacher, batch, run.plan.precision.autocast, run.device);
  }
  timer.emplace(run.phases, Phase::forward);
  torch::Tensor logits, loss;
  {
    AutocastGuard autocast(run.plan.precision.autocast, run.device);
    // train.loss hs, ns: the output layer's own loss over the rows it touches.
    loss = model_loss(*run.model, input, batch, run.plan.loss);
    if (!loss.defined()) logits = run.model->forward(input);
  }
  if (!loss.defined()) {
    logits = logits.to(torch::kFloat32);  // the loss in fp32, whatever autocast produced
    loss = batch_loss(logits, batch, run.plan.loss, run.class_weights);
    if (run.teacher) loss = with_distillation(run, loss, logits, teacher, batch.size());
  }
  return loss;
}

// Masked-token pretraining's loss of unlabelled batch `micro` of the coming step.
torch::Tensor pretraining_loss(Run& run, const RawBatch& batch, int64_t micro,
                               std::optional<PhaseTimer>& timer) {
  const uint64_t seed = masking_seed(run.plan.seed, run.state.step, micro, run.dist->rank());
  const MaskedBatch b =
      masked_batch(batch, *run.plan.data.masked_lm, *run.masking, seed, run.device);
  timer.emplace(run.phases, Phase::forward);
  AutocastGuard autocast(run.plan.precision.autocast, run.device);
  return masked_lm_loss(*run.model, b, nullptr);
}

// One batch's forward and backward (gradients accumulate); returns its mean loss per
// example (pretraining: per masked token).
double accumulate_batch(Run& run, const RawBatch& batch, int64_t micro) {
  if (batch.size() == 0) {                    // a rank out of data: it adds zero gradients
    if (run.layers) run.layers->idle_pass();  // and meets the others' per-layer collectives
    return 0.0;
  }
  const auto& t = run.plan.train;
  const Allocating activations("a training batch's activations", batch_keys(run.plan));
  std::optional<PhaseTimer> timer(std::in_place, run.phases, Phase::copy);
  const bool pretraining = run.masking.has_value();
  const torch::Tensor loss = pretraining ? pretraining_loss(run, batch, micro, timer)
                                         : classification_loss(run, batch, timer);
  timer.emplace(run.phases, Phase::backward);
  const torch::Tensor scaled =
      run.scaler.scale_loss(run.loss_scale != 1.0 ? loss * run.loss_scale : loss);
  (t.accumulate > 1 ? scaled / static_cast<double>(t.accumulate) : scaled).backward();
  if (run.layers) run.layers->reduce_rows();  // a table kept by rows: its batch's rows
  const double value = loss.item<double>();   // on a GPU: waits for the backward
  run.losses_finite = run.losses_finite && std::isfinite(value);
  return value / (run.plan.loss.sum && !pretraining ? batch.size() : 1);
}

// The gradients' global L2 norm, as clip_grad_norm_ computes it (sparse ones too).
double gradient_norm(torch::nn::Module& model) {
  double squares = 0.0;
  for (const auto& p : model.parameters()) {
    if (!p.grad().defined()) continue;
    const double n = p.grad().norm().item<double>();
    squares += n * n;
  }
  return std::sqrt(squares);
}

// Averages gradients over the ranks, unscales, clips and steps. A step whose gradients
// overflowed under loss scaling is skipped (the weights stay) but still counts, so that
// step limits, schedules and evaluation points do not shift. A non-finite loss or
// gradient goes to the guard (nonfinite.h): an error, or under skip_batch a skipped step
// that counts the same way.
void optimizer_step(Run& run) {
  {
    PhaseTimer timer(run.phases, Phase::allreduce);
    run.dist->average_gradients(
        *run.model, run.layers ? run.layers->sharded_parameters() : std::vector<torch::Tensor>{});
  }
  PhaseTimer timer(run.phases, Phase::optimizer);
  const bool finite = run.scaler.unscale(run.model->parameters());
  run.scaler.update(finite);
  // Loss scaling's overflow skips come first; the guard sees what would reach the weights.
  const bool take = finite && nonfinite_guard(run, run.losses_finite);
  run.losses_finite = true;
  run.grad_norm = std::nan("");
  if (take) {
    if (run.pruner) run.pruner->mask_gradients();  // before clipping measures them
    const double clip = run.plan.train.clip_norm;
    if (clip > 0) {  // run.shard: parameters: the layers' gradients are the ranks' slices
      run.grad_norm = run.layers ? run.layers->clip_gradients(clip)
                                 : torch::nn::utils::clip_grad_norm_(run.model->parameters(), clip);
    } else if (run.log_this_step) {  // the same step on every rank
      // Only on metrics.csv's steps: a pass over every gradient (80 MB for fastText's tables).
      run.grad_norm = run.layers ? run.layers->gradient_norm() : gradient_norm(*run.model);
    }
    {
      // The optimizer's state is allocated at its first step (Adam: two tensors a weight).
      const Allocating state(
          fmt::format("{}'s state", to_string(run.plan.train.optimizer.type)),
          fmt::format("{}, train.optimizer.type",
                      fmt::join(traits_of(run.plan.model.type).size_keys, ", ")));
      if (run.shards) {
        run.shards->step();  // this rank's slice of it
        if (run.layers) run.layers->measure_between_steps();
      } else {
        zero_missing_gradients(*run.optimizer);
        run.optimizer->step();
      }
    }
    if (run.pruner) run.pruner->apply();
    if (run.plan.train.max_norm > 0) apply_max_norm(*run.model, run.plan.train.max_norm);
  }
  drop_gradients(*run.optimizer);
  ++run.state.step;
  if (run.pruner) run.pruner->update(run.state.step);
}

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

// report.json's "environment" of sift-main's run folder `dir`.
nlohmann::json main_environment(const Run& run, const std::string& dir) {
  return run_environment({"sift-main", TORCH_VERSION, run.device.str(), at::get_num_threads(),
                          run.dist->world_size(), run.plan.data.train_stream.workers,
                          run_file(dir, kConfigFile)});
}

class TorchLearner : public Learner {
 public:
  explicit TorchLearner(Run& run) : run_(run) {}
  Group& group() override { return *run_.dist; }

  void start(const TextEncoder& encoder) override {
    open_transfer(run_, encoder);
    run_.model->train();
    drop_gradients(*run_.optimizer);
  }
  const TextEncoder* teacher_encoder() const override {
    return run_.teacher ? &run_.teacher->encoder : nullptr;
  }
  void start_epoch() override { run_.data_done = false; }
  bool next_batch(ShardedStream& stream, RawBatch& batch) override {
    return sift::next_batch(run_, stream, batch);
  }
  Stepped step(const RawBatch& batch, double lr, bool logs) override {
    set_lr(*run_.optimizer, lr, run_.lr_scales);
    if (run_.shards) run_.shards->set_lr(lr);
    if (run_.layers) run_.layers->from_whole();
    const double loss = accumulate_batch(run_, batch, micro_);
    if (++micro_ < run_.plan.train.accumulate) return {loss, false};
    micro_ = 0;
    run_.log_this_step = logs;
    optimizer_step(run_);
    return {loss, true};
  }
  bool accumulating() const override { return micro_ > 0; }
  void end_steps() override {
    run_.log_this_step = false;
    if (micro_ > 0) optimizer_step(run_);  // the epoch's last, partial accumulation
    micro_ = 0;
  }
  double grad_norm() const override { return run_.grad_norm; }
  double loss_scale() const override {
    return run_.scaler.enabled() ? run_.scaler.scale() : std::nan("");
  }

  Evaluation evaluate(ShardedStream& stream, ConfusedExamples* confused) override {
    const Allocating batches("an evaluation batch's activations", batch_keys(run_.plan));
    // run.shard: parameters: the forward gathers each layer, so the ranks, whose batches
    // differ in number, evaluate in step (the model is not made whole: its peak memory).
    const Lockstep lockstep{[this](bool mine) { return run_.dist->agree_on_batch(mine, 0).any; },
                            [this] { run_.layers->idle_forward(); }};
    const Lockstep* in_step = run_.layers ? &lockstep : nullptr;
    Evaluation e =
        run_.masking
            ? evaluate_masked(*run_.model, stream, *run_.plan.data.masked_lm, *run_.masking,
                              run_.plan.seed, run_.device, in_step)
            : sift::evaluate(run_.model, stream, run_.task.encoder.kind, run_.task.labels.size(),
                             run_.device, run_.plan.labels, confused, in_step);
    if (run_.layers && !run_.masking) run_.layers->release_rows();
    reduce_evaluation(*run_.dist, e);
    run_.model->train();
    return e;
  }
  void add_to_record(nlohmann::json& record) const override {
    if (!run_.scaler.enabled()) return;
    record["loss_scale"] = run_.scaler.scale();
    record["skipped_steps"] = run_.scaler.skipped_steps();
  }
  std::string not_a_best(int64_t step) const override {
    // While pruning is on its way the weights are not those the run ends with.
    if (run_.pruner && !run_.pruner->at_final_sparsity(step)) {
      return " (before the final sparsity: not a best candidate)";
    }
    return "";
  }

  int64_t bytes() const override {
    int64_t total = 0;
    for (const auto& named : named_tensors(*run_.model)) total += named.second.nbytes();
    return total;
  }
  bool weights_finite() const override {
    if (!run_.layers) return tensors_finite(run_.model->parameters());
    // run.shard: parameters: the ranks' slices hold every weight; all ranks agree.
    std::vector<int64_t> finite{tensors_finite(run_.layers->held()) ? 1 : 0};
    run_.dist->sum(finite);
    return finite[0] == run_.dist->world_size();
  }
  bool best_to_disk() const override {
    // run.shard: parameters: a copy would be the whole weights; best.ckpt is written and
    // read back a layer at a time instead.
    if (run_.layers) return true;
    // A table that began as a fill is written as its changed rows; every rank of a group
    // would have to read it back.
    return !run_.dist->is_group() && !run_.model->initial_fills().empty();
  }
  bool holds_best_copy() const override { return !run_.best_weights.empty(); }
  void copy_best() override {
    whole();
    torch::NoGradGuard no_grad;
    const NamedTensors current = named_tensors(*run_.model);
    auto& best = run_.best_weights;
    if (best.empty()) {
      for (const auto& [name, w] : current) best.emplace_back(name, w.detach().clone());
    } else {
      for (size_t i = 0; i < current.size(); ++i) best[i].second.copy_(current[i].second);
    }
  }
  void drop_best_copy() override { run_.best_weights.clear(); }
  void restore_best_copy() override {
    if (run_.best_weights.empty()) return;
    whole();
    torch::NoGradGuard no_grad;
    const NamedTensors current = named_tensors(*run_.model);
    for (size_t i = 0; i < current.size(); ++i)
      current[i].second.copy_(run_.best_weights[i].second);
  }
  void load_weights(const std::string& path) override {
    if (!run_.layers) {
      const Checkpoint c = load_checkpoint(path, {"optimizer"});
      run_.model->remember_fills(load_model_weights(*run_.model, c, path));
      return;
    }
    // run.shard: parameters: read from the file into one freed layer at a time.
    const Checkpoint c = load_checkpoint(path, {"optimizer", "model"});
    run_.model->remember_fills(load_model_weights(
        *run_.model, c, path, {}, [this](const torch::Tensor& t) { run_.layers->load(t); }));
    run_.layers->load_rest();
  }
  void add_rank_blobs(std::map<std::string, std::string>& blobs) override {
    // Collective: rank 0's optimizer gets the whole state's layout; write() gathers it a
    // tensor at a time into the file.
    state_streamed_ = run_.shards && run_.shards->prepare_state(*run_.optimizer);
    blobs["rng"] = rng_state();
    // The transfer set's streams run across epochs: their positions are saved at each save.
    for (const auto& t : run_.transfer) blobs[transfer_blob(t.name)] = t.stream->save_state();
  }
  void write(const std::string& path, const nlohmann::json& meta,
             const std::map<std::string, std::string>& blobs, Saved what) override {
    Checkpoint c;
    c.meta = meta;
    // Serialised while the file is written (a device's tensors are copied to the CPU).
    c.tensor_blobs["model"] =
        what == Saved::best_copy ? run_.best_weights : named_tensors(*run_.model);
    c.fills["model"] = run_.model->initial_fills();
    // best.ckpt is chosen at the final sparsity only, so the masks are those of now.
    if (run_.pruner) c.tensor_blobs[kPruneMasksSection] = run_.pruner->masks();
    bool layers_done = !gathers_layers(what);
    const bool streamed = what == Saved::last && state_streamed_;
    if (streamed) {
      // run.shard: each state tensor gathered as its bytes are written, after the
      // model's layers (the order of the other ranks' take_part_in_write).
      const FillFreed fill = [&](const torch::Tensor& t) {
        if (!layers_done) run_.layers->gather_rest();
        layers_done = true;
        run_.shards->fill_state(t);
      };
      c.streams["optimizer"] =
          optimizer_stream(*run_.optimizer, run_.shards->state_tensors(), fill);
    } else if (what == Saved::last) {
      // Written from the state's own memory, not first copied whole into a string.
      c.streams["optimizer"] = optimizer_stream(*run_.optimizer, {}, [](const torch::Tensor&) {});
    }
    if (what == Saved::last && run_.scaler.enabled()) c.meta["loss_scaler"] = run_.scaler.state();
    for (const auto& [name, bytes] : blobs) c.blobs[name] = bytes;
    if (gathers_layers(what)) {
      // Each freed layer gathered as its tensors are written, one at a time.
      c.fill_freed["model"] = [this](const torch::Tensor& t) { run_.layers->fill(t); };
    }
    save_checkpoint(path, c);
    if (!layers_done) run_.layers->gather_rest();
    if (streamed) run_.shards->end_state_write();
    if (what == Saved::last && run_.shards) run_.optimizer->state().clear();
  }
  void take_part_in_write(Saved what) override {
    if (gathers_layers(what)) run_.layers->gather_rest();  // the writer's fills, in order
    if (what == Saved::last && run_.shards) run_.shards->send_state();
  }

  std::string training_path() const override { return run_.training_path; }
  int64_t skipped_steps() const override { return run_.scaler.skipped_steps(); }
  void add_summary(nlohmann::json& train, Progress& progress) override {
    if (run_.scaler.skipped_steps() > 0) {
      progress.log(
          fmt::format("loss scaling skipped {} steps with inf/nan gradients (scale now {})",
                      run_.scaler.skipped_steps(), run_.scaler.scale()));
    }
    if (run_.dist->is_group()) {
      train["world_size"] = run_.dist->world_size();
      train["allreduce_seconds"] = run_.dist->gradient_seconds();
      train["allreduce_calls"] = run_.dist->gradient_calls();
      train["shard"] = to_string(run_.plan.distributed.shard);
    }
    train["ranks"] = rank_figures(run_);  // collective; one process: its own
    if (run_.dist->is_group()) progress.log(ranks_text(train["ranks"]));
    for (const auto& transfer : run_.transfer) {
      train["transfer"][transfer.name] = {{"rows_per_batch", transfer_rows(run_, transfer.name)},
                                          {"epoch", transfer.stream->epoch()}};
    }
    run_.transfer.clear();  // their readers stop here; the encoders they hold are the loop's
  }
  void add_report(nlohmann::json& train, std::string& text) const override {
    if (!run_.pruner) return;
    train["pruning"] = run_.pruner->report();
    text += run_.pruner->report_text();
  }
  nlohmann::json environment(const std::string& dir) const override {
    return main_environment(run_, dir);
  }

 private:
  // run.shard: parameters: every layer whole (collective) until the next step frees them.
  void whole() const {
    if (run_.layers) run_.layers->hold_whole();
  }
  // Whether a save of `what` gathers the layers from the ranks (the best copy is whole).
  bool gathers_layers(Saved what) const { return run_.layers && what != Saved::best_copy; }

  Run& run_;
  int64_t micro_ = 0;            // batches accumulated since the last optimizer step
  bool state_streamed_ = false;  // run.shard: last.ckpt's state is gathered as it is written
};

// The fastText learner (fasttext_learner.h) over the model's tensors, with what sift-main
// adds: ns's draws from LibTorch's generator, whose state last.ckpt keeps (a resume draws
// on from it), and its report (the path's words, the rank's figures, the environment).
// The fast path is one process on the CPU (fast_path_rules.h).
class MainFastTextLearner : public FastTextLearner {
 public:
  explicit MainFastTextLearner(Run& run) : FastTextLearner(run, tables_of(run)), main_(run) {}

  void add_rank_blobs(std::map<std::string, std::string>& blobs) override {
    blobs["rng"] = rng_state();
  }
  std::string training_path() const override { return main_.training_path; }
  void add_summary(nlohmann::json& train, Progress& /*progress*/) override {
    train["ranks"] = rank_figures(main_);
  }
  nlohmann::json environment(const std::string& dir) const override {
    return main_environment(main_, dir);
  }

 protected:
  std::unique_ptr<FusedSgd> new_step() override { return bag_sgd(bag_tables(main_)); }

 private:
  static BagTables bag_tables(Run& run) {
    return find_model(run.plan.model.type).bag_tables(*run.model);
  }
  static std::unique_ptr<FastTextTables> tables_of(Run& run) {
    return std::make_unique<FastTextTables>(
        bag_tables(run), static_cast<int64_t>(run.task.labels.size()), &run.model->initial_fills());
  }

  Run& main_;
};

}  // namespace

std::unique_ptr<Learner> torch_learner(Run& run) {
  if (run.fused) return std::make_unique<MainFastTextLearner>(run);
  return std::make_unique<TorchLearner>(run);
}

}  // namespace sift
