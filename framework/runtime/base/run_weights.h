// Which checkpoint of a run folder holds the weights to use, checked against the folder's
// files; without LibTorch (checkpoint_file.h).
#pragma once

#include <string>

#include "framework/runtime/base/checkpoint_file.h"

namespace sift {

// The model weights of a run folder: best.ckpt (which may name last.ckpt's weights), else
// last.ckpt; the "model" section is left on disk (on_disk), as is "optimizer". `path`
// receives the file they came from.
StoredCheckpoint load_run_weights(const std::string& run_dir, std::string* path = nullptr);

}  // namespace sift
