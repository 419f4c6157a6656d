#include "framework/train/saving.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "core/error.h"
#include "framework/runtime/run_folder.h"
#include "framework/train/distributed_training.h"
#include "framework/train/nonfinite.h"
#include "framework/train/optimization.h"

namespace sift {
namespace {

// A transfer stream's data position in last.ckpt (one per rank, as "data").
std::string transfer_blob(const std::string& name) { return "data_" + name; }

std::string rng_state() {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  const torch::Tensor state = generator.get_state();
  return std::string(static_cast<const char*>(state.data_ptr()), state.numel());
}

void set_rng_state(const std::string& bytes) {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  auto state = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kUInt8);
  std::memcpy(state.data_ptr(), bytes.data(), bytes.size());
  generator.set_state(state);
}

nlohmann::json meta_of(const Run& run, int64_t epoch, int64_t step) {
  nlohmann::json meta = checkpoint_meta(run.plan.model.type, run.task.labels.size(), epoch, step);
  meta["run_files"] = run.file_hashes;  // checked on load: check_run_file_hashes
  return meta;
}

// Writes best.ckpt from the weights in memory when they changed since the last write.
// When they are the weights last.ckpt holds, best.ckpt only names that file: fastText's
// bucket tables are 80 MB, and writing them twice doubled the end of short runs.
void save_best(Run& run, bool same_as_last) {
  if (run.best.saved || (run.best.weights.empty() && !run.best.in_model)) return;
  run.best.on_disk = false;  // a best in memory is written (and a copy kept) again
  run.best.saved = true;
  run.best.is_reference = same_as_last;
  if (!run.dist->is_primary()) return;  // only rank 0 writes
  Checkpoint c;
  c.meta = best_checkpoint_meta(run.plan.model.type, run.task.labels.size(), run.state,
                                run.file_hashes, run.best.metrics, same_as_last);
  if (!same_as_last) {
    c.tensor_blobs["model"] = run.best.in_model ? named_tensors(*run.model) : run.best.weights;
    c.fills["model"] = run.model->initial_fills();
  }
  // best.ckpt is chosen at the final sparsity only, so the masks are those of now.
  if (run.pruner) c.tensor_blobs[kPruneMasksSection] = run.pruner->masks();
  save_checkpoint(run_file(run.dir, kBestCheckpointFile), c);
}

void write_last(Run& run, const ShardedStream& stream, bool epoch_complete) {
  // Each rank's own position and counters; in a group rank 0 gathers them all.
  std::map<std::string, std::string> mine{{"rng", rng_state()},
                                          {"state", run.state.rank_counters()}};
  if (!epoch_complete) mine["data"] = stream.save_state();
  // The transfer set's streams run across epochs: their positions are saved at each save.
  for (const auto& t : run.transfer) mine[transfer_blob(t.name)] = t.stream->save_state();
  auto rank_blobs = gather_rank_blobs(*run.dist, mine);
  if (!run.dist->is_primary()) return;
  Checkpoint c;
  c.meta = meta_of(run, run.state.epoch, run.state.step);
  c.meta["world_size"] = run.dist->world_size();
  run.state.to_meta(c.meta, epoch_complete);
  task_counts_to_meta(run.task, c.meta);
  // Serialised while the file is written (a device's tensors are copied to the CPU).
  c.tensor_blobs["model"] = named_tensors(*run.model);
  c.fills["model"] = run.model->initial_fills();
  if (run.pruner) c.tensor_blobs[kPruneMasksSection] = run.pruner->masks();
  c.blobs["optimizer"] = optimizer_bytes(*run.optimizer);
  if (run.scaler.enabled()) c.meta["loss_scaler"] = run.scaler.state();
  for (auto& [name, bytes] : rank_blobs) c.blobs[name] = std::move(bytes);
  save_checkpoint(run_file(run.dir, kLastCheckpointFile), c);
}

const std::string& blob_of(const Checkpoint& c, const std::string& name, const std::string& path) {
  auto it = c.blobs.find(name);
  if (it == c.blobs.end()) throw Error(fmt::format("{} holds no {} state", path, name));
  return it->second;
}

void copy_best_weights(Run& run) {
  torch::NoGradGuard no_grad;
  const NamedTensors current = named_tensors(*run.model);
  auto& best = run.best.weights;
  if (best.empty()) {
    for (const auto& [name, w] : current) best.emplace_back(name, w.detach().clone());
  } else {
    for (size_t i = 0; i < current.size(); ++i) best[i].second.copy_(current[i].second);
  }
}

}  // namespace

void keep_best_weights(Run& run) {
  if (!run.best.in_model) return;
  if (!run.dist->is_group() && !run.model->initial_fills().empty()) {
    // From the model's weights, before training changes them; written even when
    // best.ckpt names last.ckpt's (the same weights), which the next save replaces.
    run.best.saved = false;
    save_best(run, false);
    run.best.weights.clear();
    run.best.on_disk = true;
  } else {
    copy_best_weights(run);
    run.best.on_disk = false;
  }
  run.best.in_model = false;
}

void restore_best(Run& run) {
  if (run.best.in_model) return;
  if (run.best.on_disk) {
    const std::string path = run_file(run.dir, kBestCheckpointFile);
    const Checkpoint best = load_checkpoint(path, {"optimizer"});
    run.model->remember_fills(load_model_weights(*run.model, best, path));
    return;
  }
  if (run.best.weights.empty()) return;
  torch::NoGradGuard no_grad;
  const NamedTensors current = named_tensors(*run.model);
  for (size_t i = 0; i < current.size(); ++i) current[i].second.copy_(run.best.weights[i].second);
}

void save_last(Run& run, const ShardedStream& stream, bool epoch_complete) {
  // The weights agree over the ranks, so every rank refuses alike and none waits.
  check_weights_finite(run, "last.ckpt");
  const bool same = run.state.best_step == run.state.step;
  if (run.best.is_reference && !same) {
    // best.ckpt names the last.ckpt about to be replaced: give it its own copy first.
    run.best.saved = false;
    save_best(run, false);
  }
  write_last(run, stream, epoch_complete);
  save_best(run, same);  // after last.ckpt's buffers are gone: one large buffer at a time
}

void repair_best(Run& run, const Checkpoint& last) {
  if (!run.dist->is_primary() || !run.best.is_reference) return;
  // The best weights are last.ckpt's, so its last validation is theirs. Needed even when
  // best.ckpt is as the save left it: the next save gives best.ckpt its own copy, and
  // without them that copy said "metrics": null (CrashResume's kills caught it at times).
  run.best.metrics = last.meta.value("metrics", nlohmann::json());
  const std::string path = run_file(run.dir, kBestCheckpointFile);
  if (std::filesystem::exists(path)) {
    const Checkpoint best = load_checkpoint(path, {"model", "optimizer"});
    if (best.meta.value("weights_in", "") == std::string(kLastCheckpointFile) &&
        best.meta.value("step", int64_t{-1}) == run.state.step) {
      return;  // as the save left it
    }
  }
  run.best.saved = false;
  save_best(run, true);
}

void restore_missing_best(const std::string& run_dir) {
  const std::string best_path = run_file(run_dir, kBestCheckpointFile);
  const std::string last_path = run_file(run_dir, kLastCheckpointFile);
  if (std::filesystem::exists(best_path) || !std::filesystem::exists(last_path)) return;
  const Checkpoint last = load_checkpoint(last_path, {"model", "optimizer"});
  const nlohmann::json& m = last.meta;
  const int64_t best_step = m.value("best_step", int64_t{-1});
  if (!m.value("has_best", false) || best_step != m.value("step", int64_t{-2})) return;
  // What save_best writes when best.ckpt names last.ckpt's weights.
  Checkpoint c;
  c.meta = checkpoint_meta(m.value("model", ""), m.value("num_classes", int64_t{0}),
                           m.value("best_epoch", int64_t{0}), best_step);
  c.meta["run_files"] = m.value("run_files", nlohmann::json());
  c.meta["metrics"] = m.value("metrics", nlohmann::json());
  c.meta["weights_in"] = kLastCheckpointFile;
  save_checkpoint(best_path, c);
}

void restore_counters(Run& run, const Checkpoint& last, const std::string& path) {
  if (!last.on_disk.count("model")) throw Error(fmt::format("{} holds no model state", path));
  const auto& meta = last.meta;
  check_world_size(meta, path, run.dist->world_size());
  const int64_t rank = run.dist->rank();
  // Rank 0's counters are in the metadata; each other rank's in its own blob.
  const nlohmann::json counters =
      rank == 0 ? meta : nlohmann::json::parse(blob_of(last, rank_blob("state", rank), path));
  run.state = TrainingState::from_meta(meta, counters, path);
  task_counts_from_meta(meta, path, run.task);
  if (run.state.has_best) copy_best_weights(run);
  run.best.saved = true;
  run.best.is_reference = run.state.has_best && run.state.best_step == run.state.step;
}

std::string restore_last(Run& run, const Checkpoint& last, const std::string& path) {
  const auto& meta = last.meta;
  const int64_t rank = run.dist->rank();
  run.model->remember_fills(load_model_weights(*run.model, last, path));
  // sift-lite's checkpoints (lite_trainer.h) hold neither: plain SGD keeps no state, and
  // its fast path draws nothing from LibTorch's generator; both start fresh.
  if (last.blobs.count("optimizer")) {
    load_optimizer_bytes(*run.optimizer, blob_of(last, "optimizer", path), path);
  }
  if (last.blobs.count(rank_blob("rng", rank))) {
    set_rng_state(blob_of(last, rank_blob("rng", rank), path));
  }
  if (meta.contains("loss_scaler")) run.scaler.load_state(meta.at("loss_scaler"));
  if (run.pruner) run.pruner->load(blob_of(last, kPruneMasksSection, path), path);
  run.transfer_states.clear();
  for (const auto& t : run.plan.data.transfer) {
    // Absent when the transfer source was added on resuming: it starts at its beginning.
    const auto it = last.blobs.find(rank_blob(transfer_blob(t.name), rank));
    if (it != last.blobs.end()) run.transfer_states[t.name] = it->second;
  }
  if (epoch_complete_in(meta, path)) return "";
  const std::string& data = blob_of(last, rank_blob("data", rank), path);
  if (data.empty()) throw Error(fmt::format("{} holds no data position", path));
  return data;
}

}  // namespace sift
