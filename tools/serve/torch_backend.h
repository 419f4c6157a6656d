// A run folder or export under LibTorch (every model type and export kind that `sift
// predict` reads), behind the ModelBackend interface; sift-main only.
#pragma once

#include <memory>
#include <string>

#include "tools/serve/model_backend.h"

namespace sift::serve {

// load_model's bundle of `path` (sift::Error as load_model says it).
std::unique_ptr<ModelBackend> open_torch_backend(const std::string& path);

// Any model `sift predict` reads: a fastText run or export on plain arrays
// (fasttext_backend.h), everything else under LibTorch, whose loader then says what is
// wrong with a path neither reads. `sift serve` in sift-main and the Python module.
std::unique_ptr<ModelBackend> open_any_backend(const std::string& path);

}  // namespace sift::serve
