#include "framework/train/layer_shards.h"

#include <fmt/format.h>
#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <unordered_set>

#include "core/error.h"

namespace sift {
namespace {

// A layer's buffer on the CPU comes straight from the kernel and goes back to it when the
// layer is freed: glibc, as sift tunes it (core/keep_freed_memory.h), serves blocks up to
// 32 MB from its heap and keeps up to 256 MB of freed heap, so a freed layer would stay in
// the process's memory and stage 3 would save nothing of it (bench/sharding.py --stage3
// measured peak RSS at 0.994x of data parallelism's so). These bytes are not in the phase
// table's tensor peak (the counting allocator does not see them).
struct Mapping {
  void* data;
  size_t bytes;
};

void unmap(void* context) {
  auto* m = static_cast<Mapping*>(context);
  munmap(m->data, m->bytes);
  delete m;
}

at::DataPtr mapped(size_t bytes, const c10::Device& device) {
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED) {
    throw Error(fmt::format("run.shard: parameters: no memory for a layer's {} bytes", bytes));
  }
  return at::DataPtr(data, new Mapping{data, bytes}, &unmap, device);
}

}  // namespace

LayerShards::LayerShards(Distributed& dist, ShardedOptimizer& shards,
                         const std::vector<torch::Tensor>& params,
                         const std::vector<int64_t>& units, std::vector<torch::Tensor> all)
    : dist_(dist), shards_(shards), all_(std::move(all)) {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    if (units[i] < 0) continue;
    if (static_cast<int64_t>(layers_.size()) <= units[i]) layers_.resize(units[i] + 1);
    layers_[units[i]].unit = units[i];
    layers_[units[i]].params.push_back(params[i]);
    sharded_.push_back(params[i]);
  }
  for (auto& l : layers_) {
    if (l.unit < 0) continue;
    l.flat = torch::empty({shards_.unit_elements(l.unit)}, l.params.front().options());
    allocate_memory(l);
    int64_t at = 0;
    for (auto& p : l.params) {
      auto view = l.flat.narrow(0, at, p.numel()).view(p.sizes());
      view.copy_(p.detach());
      p.set_data(view);  // the same parameter (autograd, optimizer, module), its memory in flat
      at += p.numel();
    }
  }
  // The layers' first storages, freed just now, would stay in glibc's heap (the trim
  // threshold keep_freed_memory sets) and in RSS with them.
  malloc_trim(0);
}

LayerShards::Layer* LayerShards::layer(int64_t index) {
  if (index >= static_cast<int64_t>(layers_.size()) || layers_[index].unit < 0) return nullptr;
  return &layers_[index];
}

void LayerShards::allocate_memory(Layer& l) {
  const auto& storage = l.flat.storage();
  const size_t bytes = static_cast<size_t>(l.flat.numel()) * l.flat.element_size();
  storage.set_data_ptr_noswap(l.flat.is_cpu() ? mapped(bytes, l.flat.device())
                                              : storage.allocator()->allocate(bytes));
  storage.set_nbytes(bytes);
}

void LayerShards::free_memory(Layer& l) {
  const auto& storage = l.flat.storage();
  storage.set_data_ptr_noswap(at::DataPtr(nullptr, l.flat.device()));
  storage.set_nbytes(0);
}

void LayerShards::gather(int64_t index) {
  Layer* l = layer(index);
  if (l == nullptr || whole_) return;
  allocate_memory(*l);
  shards_.gather_unit(l->unit, l->flat);
  peak_ = std::max(peak_, resident_bytes());
}

void LayerShards::release(int64_t index) {
  Layer* l = layer(index);
  if (l == nullptr || whole_) return;
  free_memory(*l);
}

void LayerShards::reduce_gradients(int64_t index, const std::vector<torch::Tensor>& grads) {
  Layer* l = layer(index);
  if (l == nullptr) return;
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> flat;
  for (size_t i = 0; i < l->params.size(); ++i) {
    const bool given = i < grads.size() && grads[i].defined();
    flat.push_back(given ? grads[i].reshape(-1).to(l->flat.scalar_type())
                         : torch::zeros({l->params[i].numel()}, l->flat.options()));
  }
  auto gradient = torch::cat(flat);
  dist_.average(gradient);
  shards_.add_unit_gradient(l->unit, gradient);
}

void LayerShards::hold_whole() {
  if (whole_) return;
  torch::NoGradGuard no_grad;
  for (auto& l : layers_) {
    if (l.unit < 0) continue;
    allocate_memory(l);
    shards_.gather_unit(l.unit, l.flat);
  }
  whole_ = true;
}

void LayerShards::from_whole() {
  if (!whole_) return;
  for (auto& l : layers_) {
    if (l.unit < 0) continue;
    shards_.keep_unit(l.unit, l.flat);
    free_memory(l);
  }
  whole_ = false;
}

void LayerShards::idle_pass() {
  const int64_t n = static_cast<int64_t>(layers_.size());
  for (int64_t i = 0; i < n; ++i) {
    gather(i);
    release(i);
  }
  for (int64_t i = n - 1; i >= 0; --i) {
    gather(i);
    release(i);
    reduce_gradients(i, {});
  }
}

int64_t LayerShards::resident_bytes() const {
  std::unordered_set<const void*> seen;
  int64_t bytes = shards_.kept_apart_bytes();
  for (const auto& p : all_) {
    const auto& storage = p.storage();
    if (seen.insert(storage.unsafeGetStorageImpl()).second) {
      bytes += static_cast<int64_t>(storage.nbytes());
    }
  }
  return bytes;
}

void LayerShards::measure_between_steps() { between_steps_ = resident_bytes(); }

int64_t LayerShards::largest_layer_bytes() const {
  int64_t bytes = 0;
  for (const auto& l : layers_) {
    if (l.unit >= 0) bytes = std::max(bytes, static_cast<int64_t>(l.flat.nbytes()));
  }
  return bytes;
}

}  // namespace sift
