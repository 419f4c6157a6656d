#include "framework/runtime/checkpoint.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <unordered_map>

#include "core/error.h"
#include "framework/runtime/base/checkpoint_writer.h"
#include "framework/runtime/untouched_zeros.h"
#include "models/init.h"

namespace sift {

// The torch-free reader (checkpoint_file.h) names dtypes by these codes.
static_assert(static_cast<int8_t>(torch::kFloat) == kFloatCode);
static_assert(static_cast<int8_t>(torch::kLong) == kLongCode);

NamedTensors named_tensors(const torch::nn::Module& module) {
  NamedTensors out;
  for (const auto& p : module.named_parameters()) out.emplace_back(p.key(), p.value());
  for (const auto& b : module.named_buffers()) out.emplace_back(b.key(), b.value());
  return out;
}

namespace {

// Whether `t` has elements and no memory (a freed layer's, layer_shards.h).
bool freed(const torch::Tensor& t) { return t.numel() > 0 && t.storage().data() == nullptr; }

// The views of `tensors`, each a contiguous CPU tensor kept in `held` (a CPU tensor that
// is already one is its own storage: no copy). A freed one is fetched through `fill` when
// written, its CPU copy kept in one holder until the next.
std::vector<TensorView> views_of(const NamedTensors& tensors, std::vector<torch::Tensor>& held,
                                 const FillFreed* fill = nullptr) {
  std::vector<TensorView> views;
  auto holder = std::make_shared<torch::Tensor>();
  for (const auto& [name, tensor] : tensors) {
    const void* data = nullptr;
    std::function<const void*()> fetch;
    if (!freed(tensor)) {
      held.push_back(tensor.detach().to(torch::kCPU).contiguous());
      data = held.back().data_ptr();
    } else if (fill && *fill) {
      fetch = [fill = *fill, tensor = tensor, holder]() -> const void* {
        fill(tensor);
        *holder = tensor.detach().to(torch::kCPU).contiguous();
        return holder->data_ptr();
      };
    } else {
      throw Error(fmt::format("checkpoint: tensor '{}' is freed (a sharded layer's)", name));
    }
    views.push_back({name, static_cast<int8_t>(tensor.scalar_type()), tensor.sizes().vec(), data,
                     static_cast<size_t>(tensor.element_size()), std::move(fetch)});
  }
  return views;
}

void on_torch_threads(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  at::parallel_for(0, n, 1, fn);
}

}  // namespace

std::string module_bytes(const torch::nn::Module& module) {
  return tensors_bytes(named_tensors(module));
}

std::string tensors_bytes(const NamedTensors& tensors) {
  std::vector<torch::Tensor> held;
  return tensor_records(views_of(tensors, held));
}

std::string optimizer_bytes(const torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

namespace {

// The order in which `archive` writes the bytes of `deferred` (indices; a tensor without
// bytes has none), and the archive's size: LibTorch's writer hands each record's bytes
// over in one piece from the tensor's memory.
std::pair<std::vector<size_t>, uint64_t> archive_layout(
    torch::serialize::OutputArchive& archive, const std::vector<torch::Tensor>& deferred) {
  std::unordered_map<const void*, size_t> starts;
  for (size_t i = 0; i < deferred.size(); ++i) {
    if (deferred[i].nbytes() > 0) starts.emplace(deferred[i].data_ptr(), i);
  }
  std::vector<size_t> order;
  uint64_t size = 0;
  archive.save_to([&](const void* data, size_t n) {
    const auto it = starts.find(data);
    if (it != starts.end() && n == deferred[it->second].nbytes()) order.push_back(it->second);
    size += n;
    return n;
  });
  if (order.size() != starts.size()) {
    throw Error(
        fmt::format("checkpoint: the optimizer archive wrote {} of its {} state tensors "
                    "from their memory; they cannot be gathered as it is written",
                    order.size(), starts.size()));
  }
  return {order, size};
}

}  // namespace

StreamedSection optimizer_stream(const torch::optim::Optimizer& optimizer,
                                 const std::vector<torch::Tensor>& deferred, FillFreed fill) {
  auto archive = std::make_shared<torch::serialize::OutputArchive>();
  optimizer.save(*archive);
  auto [order, size] = archive_layout(*archive, deferred);
  // That pass read them: their page tables name the zero page (not memory, but mincore
  // counts it resident).
  for (const auto& t : deferred) give_back_pages(t);
  StreamedSection section;
  section.size = size;
  section.write = [archive, deferred, order = std::move(order),
                   fill = std::move(fill)](const std::function<void(std::string_view)>& sink) {
    size_t filled = 0;  // of `order`
    if (!order.empty()) fill(deferred[order[filled++]]);
    archive->save_to([&](const void* data, size_t n) {
      sink(std::string_view(static_cast<const char*>(data), n));
      if (filled < order.size()) {
        // The tensor filled last is out: the next record's CRC is taken next.
        const torch::Tensor& last = deferred[order[filled - 1]];
        if (data == last.data_ptr() && n == last.nbytes()) fill(deferred[order[filled++]]);
      }
      return n;
    });
    if (filled != order.size()) {
      throw Error(
          "checkpoint: the optimizer archive wrote its state in another order than "
          "it was measured in");
    }
  };
  return section;
}

namespace {

// Reads a changed-rows record (add_changed_rows) into `target`: the fill, then the rows
// that differ from it. Returns the fill.
template <class Reader>
UniformFill load_changed_rows(Reader& reader, torch::Tensor& target, const TensorRecordHead& head,
                              const std::string& path) {
  const ChangedRows stored = read_changed_rows(reader, head, path);
  const uint64_t row_bytes = static_cast<uint64_t>(target.size(1)) * sizeof(float);
  const bool in_place = target.is_cpu() && target.is_contiguous();
  torch::Tensor dense = in_place ? target : torch::empty(target.sizes(), torch::kFloat);
  refill_(dense, stored.fill);
  char* data = static_cast<char*>(dense.data_ptr());
  const char* values = reinterpret_cast<const char*>(stored.values.data());
  for (size_t i = 0; i < stored.indices.size(); ++i) {
    std::memcpy(data + static_cast<uint64_t>(stored.indices[i]) * row_bytes, values + i * row_bytes,
                row_bytes);
  }
  if (!in_place) target.copy_(dense);
  return stored.fill;
}

// Reads past a record's values (WeightsLeeway: a tensor the model leaves).
template <class Reader>
void skip_record(Reader& reader, const TensorRecordHead& head, const std::string& path) {
  if (head.changed_rows) {
    read_changed_rows(reader, head, path);
    return;
  }
  std::vector<char> scratch(head.bytes);
  reader.read_into(scratch.data(), head.bytes);
}

// Whether the leeway lets record `head` pass by the model's tensors `wanted`.
bool left_out(const WeightsLeeway& leeway, const std::map<std::string, torch::Tensor>& wanted,
              const TensorRecordHead& head) {
  if (!leeway.may_differ || !leeway.may_differ(head.name)) return false;
  const auto it = wanted.find(head.name);
  return it == wanted.end() || it->second.sizes().vec() != head.shape;
}

// Reads module_bytes' layout from a Cursor or a FileCursor into the module's tensors.
template <class Reader>
TensorFills load_tensors(Reader& reader, torch::nn::Module& module, const std::string& path,
                         const WeightsLeeway& leeway = {}, const FillFreed& fill_freed = {}) {
  std::map<std::string, torch::Tensor> wanted;
  for (auto& [name, tensor] : named_tensors(module)) wanted.emplace(name, tensor);
  const auto count = reader.template get<uint32_t>();
  torch::NoGradGuard no_grad;
  TensorFills fills;
  for (uint32_t i = 0; i < count; ++i) {
    const TensorRecordHead head = read_record_head(reader);
    const std::string& name = head.name;
    const auto dtype = static_cast<torch::ScalarType>(head.dtype);
    const std::vector<int64_t>& shape = head.shape;
    const uint64_t bytes = head.bytes;
    if (left_out(leeway, wanted, head)) {
      skip_record(reader, head, path);
      if (leeway.left) leeway.left->push_back(name);
      wanted.erase(name);
      continue;
    }
    auto it = wanted.find(name);
    if (it == wanted.end()) {
      throw Error(
          fmt::format("{}: the weights do not fit this model: it has no tensor '{}'", path, name));
    }
    torch::Tensor& target = it->second;
    if (freed(target)) {
      if (!fill_freed)
        throw Error(fmt::format("{}: tensor '{}' is freed (a sharded layer's)", path, name));
      fill_freed(target);
    }
    if (target.sizes().vec() != shape || target.scalar_type() != dtype) {
      throw Error(
          fmt::format("{}: the weights do not fit this model: '{}' has shape [{}] in the "
                      "checkpoint, the model expects [{}]",
                      path, name, fmt::join(shape, ", "), fmt::join(target.sizes(), ", ")));
    }
    if (head.changed_rows) {
      fills[name] = load_changed_rows(reader, target, head, path);
    } else if (bytes != static_cast<uint64_t>(target.numel()) * target.element_size()) {
      throw Error(fmt::format("{}: corrupted checkpoint (tensor '{}')", path, name));
    } else if (target.is_cpu() && target.is_contiguous()) {
      reader.read_into(static_cast<char*>(target.data_ptr()), bytes);
    } else {
      auto staged = torch::empty(shape, torch::TensorOptions().dtype(dtype));
      reader.read_into(static_cast<char*>(staged.data_ptr()), bytes);
      target.copy_(staged);
    }
    wanted.erase(it);
  }
  for (const auto& [name, tensor] : wanted) {
    if (!leeway.may_differ || !leeway.may_differ(name)) {
      throw Error(
          fmt::format("{}: the weights do not fit this model: '{}' is missing", path, name));
    }
    if (leeway.left) leeway.left->push_back(name);
  }
  return fills;
}

}  // namespace

TensorFills load_module_bytes(torch::nn::Module& module, const std::string& bytes,
                              const std::string& path) {
  Cursor cursor(bytes, path);
  return load_tensors(cursor, module, path);
}

TensorFills load_model_weights(torch::nn::Module& module, const StoredCheckpoint& checkpoint,
                               const std::string& path, const WeightsLeeway& leeway,
                               const FillFreed& fill_freed) {
  if (auto it = checkpoint.on_disk.find("model"); it != checkpoint.on_disk.end()) {
    FileCursor cursor(it->second);
    return load_tensors(cursor, module, it->second.path, leeway, fill_freed);
  } else if (auto blob = checkpoint.blobs.find("model"); blob != checkpoint.blobs.end()) {
    Cursor cursor(blob->second, path);
    return load_tensors(cursor, module, path, leeway, fill_freed);
  } else {
    throw Error(fmt::format("{} holds no model weights", path));
  }
}

namespace {

// LibTorch's archive reader takes bytes at positions as it needs them: the state is read
// into its tensors without a second copy of the archive (an istringstream copied the
// section's string: three copies of the state at a resume, with the tensors).
using ReadAt = std::function<size_t(uint64_t position, void* out, size_t n)>;

void load_optimizer_archive(torch::optim::Optimizer& optimizer, const ReadAt& read, uint64_t size,
                            const std::string& path) {
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(read, [size] { return static_cast<size_t>(size); });
    optimizer.load(archive);
  } catch (const c10::Error& e) {
    throw Error(
        fmt::format("{}: the optimizer state does not fit: {}", path, e.what_without_backtrace()));
  }
}

}  // namespace

void load_optimizer_bytes(torch::optim::Optimizer& optimizer, const std::string& bytes,
                          const std::string& path) {
  const ReadAt read = [&bytes](uint64_t at, void* out, size_t n) -> size_t {
    if (at >= bytes.size()) return 0;
    n = std::min<size_t>(n, bytes.size() - at);
    std::memcpy(out, bytes.data() + at, n);
    return n;
  };
  load_optimizer_archive(optimizer, read, bytes.size(), path);
}

void load_optimizer_section(torch::optim::Optimizer& optimizer, const SectionRef& section) {
  std::ifstream& in = *section.file;
  const ReadAt read = [&](uint64_t at, void* out, size_t n) -> size_t {
    if (at >= section.size) return 0;
    n = static_cast<size_t>(std::min<uint64_t>(n, section.size - at));
    in.clear();
    in.seekg(static_cast<std::streamoff>(section.offset + at));
    in.read(static_cast<char*>(out), static_cast<std::streamsize>(n));
    return static_cast<size_t>(in.gcount());
  };
  load_optimizer_archive(optimizer, read, section.size, section.path);
}

void save_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  CheckpointParts parts;
  parts.meta = checkpoint.meta;
  for (const auto& [name, bytes] : checkpoint.blobs) parts.blobs[name] = bytes;
  // Serialised while the file is written (a device's tensors are copied to the CPU).
  std::vector<torch::Tensor> held;
  for (const auto& [name, tensors] : checkpoint.tensor_blobs) {
    const auto fill = checkpoint.fill_freed.find(name);
    parts.tensors[name] =
        views_of(tensors, held, fill == checkpoint.fill_freed.end() ? nullptr : &fill->second);
  }
  parts.fills = checkpoint.fills;
  parts.streams = checkpoint.streams;
  write_checkpoint(path, parts, on_torch_threads);
}

Checkpoint load_checkpoint(const std::string& path, const std::vector<std::string>& leave_on_disk) {
  return Checkpoint(read_checkpoint(path, leave_on_disk));
}

}  // namespace sift
