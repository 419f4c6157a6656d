#include "framework/runtime/base/run_weights.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/error.h"
#include "framework/runtime/base/run_folder.h"

namespace sift {

namespace {

// Whether a last.ckpt's own weights are the run's best (its best validation was at its
// step). A save writes last.ckpt, then best.ckpt naming it: a crash between the two
// leaves best.ckpt naming the last.ckpt before, and these weights the best. (A missing
// best.ckpt stays an error here; `train --resume` writes it again.)
bool weights_are_best(const StoredCheckpoint& last) {
  return last.meta.value("has_best", false) &&
         last.meta.value("best_step", int64_t{-1}) == last.meta.value("step", int64_t{-2});
}

}  // namespace

StoredCheckpoint load_run_weights(const std::string& run_dir, std::string* path_out) {
  // Weights and optimizer state stay on disk: the weights are read straight into the
  // model (load_model_weights), the optimizer state is not needed here.
  const std::vector<std::string> on_disk = {"model", "optimizer"};
  std::string path = run_file(run_dir, kBestCheckpointFile);
  if (!std::filesystem::exists(path)) path = run_file(run_dir, kLastCheckpointFile);
  StoredCheckpoint checkpoint = read_checkpoint(path, on_disk);
  if (path != run_file(run_dir, kBestCheckpointFile) && checkpoint.meta.value("has_best", false)) {
    // A run without validation has no best.ckpt; one that had a best lost it.
    throw Error(
        fmt::format("{} is missing: {} records a best validation at step {}, so the "
                    "run's best weights are gone (copy last.ckpt to best.ckpt to use "
                    "the last weights instead)",
                    run_file(run_dir, kBestCheckpointFile), path,
                    checkpoint.meta.value("best_step", int64_t{-1})));
  }
  check_run_file_hashes(run_dir, checkpoint.meta, path);
  if (checkpoint.meta.contains("weights_in")) {  // best.ckpt naming last.ckpt's weights
    // Only ever last.ckpt of the same folder: a path would be followed anywhere.
    const nlohmann::json& named = checkpoint.meta["weights_in"];
    if (!named.is_string() || named.get<std::string>() != kLastCheckpointFile) {
      throw Error(fmt::format("{}: weights_in must name this run's {} (found {})", path,
                              kLastCheckpointFile, named.dump()));
    }
    const std::string last_path = run_file(run_dir, kLastCheckpointFile);
    StoredCheckpoint last = read_checkpoint(last_path, on_disk);
    if (last.meta.value("step", int64_t{-1}) != checkpoint.meta.value("step", int64_t{-2}) &&
        !weights_are_best(last)) {
      throw Error(fmt::format("{} names the weights of {} at step {}, but that file is at step {}",
                              path, last_path, checkpoint.meta.value("step", int64_t{-2}),
                              last.meta.value("step", int64_t{-1})));
    }
    if (last.on_disk.count("model")) checkpoint.on_disk["model"] = last.on_disk.at("model");
  }
  if (!checkpoint.on_disk.count("model")) {
    throw Error(fmt::format("{} holds no model weights", path));
  }
  if (path_out != nullptr) *path_out = path;
  return checkpoint;
}

}  // namespace sift
