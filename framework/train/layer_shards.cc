#include "framework/train/layer_shards.h"

#include <fmt/format.h>
#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
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
                         const std::vector<int64_t>& units, std::vector<torch::Tensor> all,
                         int64_t row_tables)
    : dist_(dist), shards_(shards), first_block_(row_tables), all_(std::move(all)) {
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
      l.view = view;
    }
  }
  for (int64_t unit = 0; unit < row_tables; ++unit) {
    Layer& l = layers_.at(unit);
    if (l.params.size() != 1 || l.params.front().dim() != 2) {
      throw Error("run.shard: parameters: a table kept by rows is one 2-D parameter");
    }
    l.by_rows = true;
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

void LayerShards::gather(int64_t index) { gather_layer(first_block_ + index); }

void LayerShards::release(int64_t index) { release_layer(first_block_ + index); }

void LayerShards::gather_layer(int64_t index) {
  Layer* l = layer(index);
  if (l == nullptr || whole_) return;
  allocate_memory(*l);
  shards_.gather_unit(l->unit, l->flat);
  peak_ = std::max(peak_, resident_bytes());
}

void LayerShards::release_layer(int64_t index) {
  Layer* l = layer(index);
  if (l == nullptr || whole_) return;
  free_memory(*l);
}

void LayerShards::reduce_gradients(int64_t index, const std::vector<torch::Tensor>& grads) {
  Layer* l = layer(first_block_ + index);
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

torch::Tensor LayerShards::gather_rows(const torch::Tensor& table, const torch::Tensor& ids) {
  Layer* l = nullptr;
  for (auto& candidate : layers_) {
    if (candidate.by_rows &&
        candidate.params.front().unsafeGetTensorImpl() == table.unsafeGetTensorImpl()) {
      l = &candidate;
    }
  }
  if (l == nullptr || whole_) return ids;
  // The same batch read again (hs's evaluation: the tree's search, then the loss): every
  // rank with a batch does so, and a rank without gathers once a batch (idle_forward).
  if (l->ids.defined() && l->asked.unsafeGetTensorImpl() == ids.unsafeGetTensorImpl()) {
    return l->renumbered;
  }
  torch::NoGradGuard no_grad;
  release_rows();
  // The union of every rank's ids, sorted: each rank's own, then all-gathered (variable
  // lengths, as bytes) and merged.
  const torch::Tensor mine =
      std::get<0>(at::_unique(ids.to(torch::kCPU, torch::kInt64).reshape(-1), /*sorted=*/true))
          .contiguous();
  std::vector<int64_t> all =
      dist_.all_gather_int64s(mine.data_ptr<int64_t>(), static_cast<size_t>(mine.numel()));
  all.push_back(0);  // row 0: a padding id stays 0 when renumbered
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  l->ids = torch::tensor(all, torch::kInt64);
  const torch::Tensor& weight = l->params.front();
  auto rows = torch::zeros({l->ids.numel(), weight.size(1)}, l->flat.options());
  shards_.gather_unit_rows(l->unit, l->ids, rows);
  l->rows_peak = std::max(l->rows_peak, static_cast<int64_t>(rows.nbytes()));
  l->params.front().set_data(rows);
  peak_ = std::max(peak_, resident_bytes());
  l->asked = ids;
  l->renumbered = torch::searchsorted(l->ids.to(ids.device()), ids);
  return l->renumbered;
}

void LayerShards::reduce_rows() {
  torch::NoGradGuard no_grad;
  for (auto& l : layers_) {
    if (!l.by_rows || !l.ids.defined()) continue;
    auto& p = l.params.front();
    torch::Tensor gradient = p.grad().defined() ? p.grad() : torch::zeros_like(p);
    dist_.average(gradient);
    shards_.add_unit_rows(l.unit, l.ids, gradient);
    p.mutable_grad() = torch::Tensor();
  }
  release_rows();
}

void LayerShards::release_rows() {
  for (auto& l : layers_) {
    if (!l.by_rows || !l.ids.defined()) continue;
    l.params.front().set_data(l.view);
    l.ids = l.asked = l.renumbered = torch::Tensor();
  }
}

void LayerShards::hold_whole() {
  release_rows();
  if (whole_) return;
  torch::NoGradGuard no_grad;
  for (auto& l : layers_) {
    if (l.unit < 0) continue;
    allocate_memory(l);
    shards_.gather_unit(l.unit, l.flat);
  }
  whole_ = true;
  peak_ = std::max(peak_, resident_bytes());
}

void LayerShards::from_whole() {
  release_rows();
  if (!whole_) return;
  for (auto& l : layers_) {
    if (l.unit < 0) continue;
    shards_.keep_unit(l.unit, l.flat);
    free_memory(l);
  }
  whole_ = false;
}

// The forward reads its tables before its blocks, and the backward runs the blocks last
// to first; the tables' gradients are reduced after it.
void LayerShards::idle_forward() {
  for (int64_t i = 0; i < first_block_; ++i) {
    gather_rows(layers_[i].params.front(), torch::empty({0}, torch::kInt64));
  }
  for (int64_t i = first_block_; i < static_cast<int64_t>(layers_.size()); ++i) {
    gather_layer(i);
    release_layer(i);
  }
}

void LayerShards::idle_pass() {
  idle_forward();
  for (int64_t b = static_cast<int64_t>(layers_.size()) - first_block_ - 1; b >= 0; --b) {
    gather(b);
    release(b);
    reduce_gradients(b, {});
  }
  reduce_rows();
}

std::vector<torch::Tensor> LayerShards::held() const {
  std::vector<torch::Tensor> out = shards_.kept_apart();
  for (const auto& p : all_) {
    if (p.numel() == 0 || p.storage().data() != nullptr) out.push_back(p);
  }
  return out;
}

int64_t LayerShards::layer_of(const torch::Tensor& param) const {
  const auto* storage = param.storage().unsafeGetStorageImpl();
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layers_[i].unit >= 0 && layers_[i].flat.storage().unsafeGetStorageImpl() == storage) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

void LayerShards::fill(const torch::Tensor& param) {
  release_rows();
  const int64_t index = layer_of(param);
  if (index < 0) throw Error("run.shard: parameters: a save asked for a tensor no layer holds");
  if (index == filled_) return;
  if (index < next_fill_) {
    throw Error(fmt::format("run.shard: parameters: a save wrote layer {} after layer {}", index,
                            next_fill_ - 1));
  }
  if (filled_ >= 0) release_layer(filled_);
  for (; next_fill_ < index; ++next_fill_) {
    gather_layer(next_fill_);
    release_layer(next_fill_);
  }
  gather_layer(index);
  filled_ = index;
  next_fill_ = index + 1;
}

void LayerShards::gather_rest() {
  if (filled_ >= 0) release_layer(filled_);
  for (; next_fill_ < static_cast<int64_t>(layers_.size()); ++next_fill_) {
    gather_layer(next_fill_);
    release_layer(next_fill_);
  }
  next_fill_ = 0;
  filled_ = -1;
}

std::vector<torch::Tensor> LayerShards::gradients(bool slices) const {
  std::vector<torch::Tensor> out;
  if (slices) {
    for (const auto& piece : shards_.kept_apart()) {
      if (piece.grad().defined()) out.push_back(piece.grad());
    }
    return out;
  }
  std::unordered_set<const void*> layered;
  for (const auto& p : sharded_) layered.insert(p.unsafeGetTensorImpl());
  for (const auto& p : all_) {
    if (!layered.count(p.unsafeGetTensorImpl()) && p.grad().defined()) out.push_back(p.grad());
  }
  return out;
}

namespace {

double squared_norm(const std::vector<torch::Tensor>& tensors) {
  double squares = 0.0;
  for (const auto& t : tensors) {
    const double n = t.norm().item<double>();
    squares += n * n;
  }
  return squares;
}

}  // namespace

double LayerShards::gradient_norm() const {
  torch::NoGradGuard no_grad;
  std::vector<double> slices{squared_norm(gradients(true))};
  dist_.sum(slices);
  return std::sqrt(slices[0] + squared_norm(gradients(false)));
}

double LayerShards::clip_gradients(double max_norm) {
  const double norm = gradient_norm();
  const double coefficient = max_norm / (norm + 1e-6);
  if (coefficient < 1.0) {
    torch::NoGradGuard no_grad;
    for (const bool slices : {true, false}) {
      for (auto g : gradients(slices)) g.mul_(coefficient);
    }
  }
  return norm;
}

void LayerShards::load(const torch::Tensor& param) {
  release_rows();
  const int64_t index = layer_of(param);
  if (index < 0) throw Error("run.shard: parameters: a load asked for a tensor no layer holds");
  if (index == loading_) return;
  loaded_.resize(layers_.size());
  if (loaded_[index]) {
    throw Error(fmt::format("run.shard: parameters: layer {}'s tensors are apart in the checkpoint",
                            index));
  }
  keep_loaded();
  allocate_memory(layers_[index]);
  peak_ = std::max(peak_, resident_bytes());
  loading_ = index;
  loaded_[index] = true;
}

void LayerShards::keep_loaded() {
  if (loading_ < 0) return;
  Layer& l = layers_[loading_];
  shards_.keep_unit(l.unit, l.flat);
  free_memory(l);
  loading_ = -1;
}

void LayerShards::load_rest() {
  keep_loaded();
  loaded_.clear();
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
    if (l.unit < 0) continue;
    bytes = std::max(bytes, l.by_rows ? l.rows_peak : static_cast<int64_t>(l.flat.nbytes()));
  }
  return bytes;
}

}  // namespace sift
