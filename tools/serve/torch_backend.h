// A run folder or export under LibTorch (every model type and export kind that `sift
// predict` reads), behind the ModelBackend interface; sift-main only.
#pragma once

#include <memory>
#include <string>

#include "tools/serve/model_backend.h"

namespace sift::serve {

// load_model's bundle of `path` (sift::Error as load_model says it).
std::unique_ptr<ModelBackend> open_torch_backend(const std::string& path);

}  // namespace sift::serve
