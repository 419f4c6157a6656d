// The models a server holds, by name. Each name has a slot whose current model (a backend
// and its batch queue) is swapped atomically on reload: the new version is loaded beside
// the old one, requests already holding the old one finish on it, and its queue stops when
// the last of them lets go. A load that fails leaves the old version serving.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tools/serve/batch_queue.h"
#include "tools/serve/model_backend.h"

namespace sift::serve {

// Loads the model at a path; sift::Error (or another exception) when it cannot.
using ModelLoader = std::function<std::unique_ptr<ModelBackend>(const std::string& path)>;

struct LoadedModel {
  std::shared_ptr<const ModelBackend> backend;
  std::unique_ptr<BatchQueue> queue;
  int64_t version = 1;
  double load_seconds = 0;
};

class ModelSlot {
 public:
  // Loads the first version; throws what the loader throws.
  ModelSlot(std::string name, std::string path, ModelLoader loader, BatchLimits limits,
            BatchObserver on_batch);
  const std::string& name() const { return name_; }
  std::shared_ptr<LoadedModel> current() const { return std::atomic_load(&current_); }
  // Loads the path again beside the current version and swaps; returns the new version.
  // Throws (the current version keeps serving) when the load fails.
  std::shared_ptr<LoadedModel> reload();

 private:
  std::shared_ptr<LoadedModel> load(int64_t version) const;

  std::string name_, path_;
  ModelLoader loader_;
  BatchLimits limits_;
  BatchObserver on_batch_;
  std::mutex reloading_;
  std::shared_ptr<LoadedModel> current_;
};

}  // namespace sift::serve
