#include "tools/serve/served_models.h"

#include <utility>

namespace sift::serve {

ModelSlot::ModelSlot(std::string name, std::string path, ModelLoader loader, BatchLimits limits,
                     BatchObserver on_batch)
    : name_(std::move(name)),
      path_(std::move(path)),
      loader_(std::move(loader)),
      limits_(limits),
      on_batch_(std::move(on_batch)) {
  current_ = load(1);
}

std::shared_ptr<LoadedModel> ModelSlot::load(int64_t version) const {
  auto model = std::make_shared<LoadedModel>();
  model->backend = loader_(path_);
  model->load_seconds = model->backend->load_seconds();
  model->version = version;
  model->queue = std::make_unique<BatchQueue>(model->backend, limits_, on_batch_);
  return model;
}

std::shared_ptr<LoadedModel> ModelSlot::reload() {
  std::lock_guard<std::mutex> lock(reloading_);
  std::shared_ptr<LoadedModel> next = load(current()->version + 1);
  std::atomic_store(&current_, next);
  return next;
}

}  // namespace sift::serve
