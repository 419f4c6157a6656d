#include "framework/train/saving.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "core/atomic_file.h"
#include "core/error.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/train/distributed_training.h"
#include "framework/train/fast_path.h"
#include "framework/train/optimization.h"
#include "framework/train/torch_learner.h"

namespace sift {
namespace {

void set_rng_state(const std::string& bytes) {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  auto state = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kUInt8);
  std::memcpy(state.data_ptr(), bytes.data(), bytes.size());
  generator.set_state(state);
}

const std::string& blob_of(const Checkpoint& c, const std::string& name, const std::string& path) {
  auto it = c.blobs.find(name);
  if (it == c.blobs.end()) throw Error(fmt::format("{} holds no {} state", path, name));
  return it->second;
}

}  // namespace

std::string transfer_blob(const std::string& name) { return "data_" + name; }

std::string rng_state() {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  const torch::Tensor state = generator.get_state();
  return std::string(static_cast<const char*>(state.data_ptr()), state.numel());
}

namespace {

// Rank 0's counters are in the metadata; each other rank's in its own blob. Resumed with
// another number of processes (at an epoch's end, check_world_size): rank 0 counts the
// examples every saved rank has seen, the others start at none.
nlohmann::json rank_counters(const Run& run, const Checkpoint& last, const std::string& path) {
  const nlohmann::json& meta = last.meta;
  const int64_t rank = run.dist->rank();
  const int64_t saved = meta.value("world_size", int64_t{1});
  if (saved == run.dist->world_size()) {
    return rank == 0 ? meta : nlohmann::json::parse(blob_of(last, rank_blob("state", rank), path));
  }
  nlohmann::json counters{{"examples_seen", int64_t{0}}};
  if (rank != 0) return counters;
  counters = meta;
  for (int64_t r = 1; r < saved; ++r) {
    const auto theirs = nlohmann::json::parse(blob_of(last, rank_blob("state", r), path));
    counters["examples_seen"] =
        counters.value("examples_seen", int64_t{0}) + theirs.value("examples_seen", int64_t{0});
  }
  return counters;
}

}  // namespace

bool best_needs_repair(Run& run, const Checkpoint& last) {
  if (!run.dist->is_primary() || !run.best.is_reference) return false;
  // The best weights are last.ckpt's, so its last validation is theirs. Needed even when
  // best.ckpt is as the save left it: the next save gives best.ckpt its own copy, and
  // without them that copy said "metrics": null (CrashResume's kills caught it at times).
  run.best.metrics = last.meta.value("metrics", nlohmann::json());
  std::error_code ignored;
  return !std::filesystem::equivalent(run_file(run.dir, kBestCheckpointFile),
                                      run_file(run.dir, kLastCheckpointFile), ignored);
}

void restore_missing_best(const std::string& run_dir) {
  const std::string best_path = run_file(run_dir, kBestCheckpointFile);
  const std::string last_path = run_file(run_dir, kLastCheckpointFile);
  if (std::filesystem::exists(best_path) || !std::filesystem::exists(last_path)) return;
  const Checkpoint last = load_checkpoint(last_path, {"model", "optimizer"});
  const nlohmann::json& m = last.meta;
  const int64_t best_step = m.value("best_step", int64_t{-1});
  if (!m.value("has_best", false) || best_step != m.value("step", int64_t{-2})) return;
  link_file_atomically(last_path, best_path);  // what save_best makes of the same weights
}

int64_t cut_metrics_back(const std::string& run_dir, int64_t rows) {
  const std::string path = run_file(run_dir, kMetricsFile);
  struct stat st {};
  // Not through a symlink or into a device: such a file is the user's, left as it is.
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::max<int64_t>(rows, 0);
  std::ifstream in(path, std::ios::binary);
  std::string kept, line;
  int64_t lines = 0;
  while ((rows < 0 || lines < rows) && std::getline(in, line)) {
    kept += line + "\n";
    ++lines;
  }
  if (in.bad()) throw Error(fmt::format("cannot read {}", path));
  if (rows >= 0 && in.peek() != std::char_traits<char>::eof()) {
    write_file_atomically(path, kept);  // the rows after last.ckpt's step: logged again
  }
  return lines;
}

void restore_counters(Run& run, const Checkpoint& last, const std::string& path) {
  if (!last.on_disk.count("model")) throw Error(fmt::format("{} holds no model state", path));
  const auto& meta = last.meta;
  check_world_size(meta, path, run.dist->world_size());
  run.state = TrainingState::from_meta(meta, rank_counters(run, last, path), path);
  task_counts_from_meta(meta, path, run.task);
  run.best.saved = true;
  run.best.is_reference = run.state.has_best && run.state.best_step == run.state.step;
  if (!run.state.has_best) return;
  if (fast_path_refusal(run).empty()) {
    // The fastText learner keeps no whole copy: the best weights are best.ckpt's, or the
    // model's when they are last.ckpt's.
    run.best.in_model = run.best.is_reference;
    run.best.on_disk = !run.best.is_reference;
    return;
  }
  torch_learner(run)->copy_best();  // the model holds best.ckpt's weights until restore_last
}

std::string restore_last(Run& run, const Checkpoint& last, const std::string& path) {
  const auto& meta = last.meta;
  const int64_t rank = run.dist->rank();
  run.model->remember_fills(load_model_weights(*run.model, last, path));
  // sift-lite's checkpoints (lite_trainer.h) hold neither: plain SGD keeps no state, and
  // its fast path draws nothing from LibTorch's generator; both start fresh.
  if (const auto it = last.on_disk.find("optimizer"); it != last.on_disk.end()) {
    load_optimizer_section(*run.optimizer, it->second);
    if (run.shards) run.shards->scatter_state(*run.optimizer);  // keeps this rank's slices
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
