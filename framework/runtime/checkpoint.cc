#include "framework/runtime/checkpoint.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <optional>
#include <sstream>

#include "core/atomic_file.h"
#include "core/crc32.h"
#include "core/error.h"
#include "models/init.h"

namespace sift {

// The torch-free reader (checkpoint_file.h) names dtypes by these codes.
static_assert(static_cast<int8_t>(torch::kFloat) == kFloatCode);
static_assert(static_cast<int8_t>(torch::kLong) == kLongCode);

namespace {

template <class T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

void put_bytes(std::string& out, const std::string& bytes) {
  put<uint64_t>(out, bytes.size());
  out += bytes;
}

}  // namespace

NamedTensors named_tensors(const torch::nn::Module& module) {
  NamedTensors out;
  for (const auto& p : module.named_parameters()) out.emplace_back(p.key(), p.value());
  for (const auto& b : module.named_buffers()) out.emplace_back(b.key(), b.value());
  return out;
}

namespace {

// A section's bytes as pieces pointing into its own framing strings (a deque: their
// addresses stay put) and into the tensors it keeps alive.
struct Section {
  std::deque<std::string> framing;
  std::vector<torch::Tensor> tensors;
  std::vector<std::string_view> pieces;
  uint64_t size = 0;
  bool has_changed_rows = false;  // a tensor is stored as changed rows: format version 2

  void add(std::string_view piece) {
    pieces.push_back(piece);
    size += piece.size();
  }
  void add_owned(std::string bytes) {
    framing.push_back(std::move(bytes));
    add(framing.back());
  }
};

// The rows of a [rows, width] float CPU tensor that differ from `fill`, in order; none
// (nullopt) when more than `limit` do. Each chunk's fill is recomputed in blocks
// (UniformFill::values) and compared row by row, bitwise: value by value with an early
// exit per row, a save's search over a fastText table took about 40 ms of each 4 MB
// SST-2 checkpoint.
std::optional<std::vector<int64_t>> changed_rows(const torch::Tensor& t, const UniformFill& fill,
                                                 size_t limit) {
  const int64_t rows = t.size(0), width = t.size(1);
  const float* data = t.data_ptr<float>();
  constexpr int64_t kChunk = int64_t{1} << 14;
  constexpr int64_t kBlockRows = 256;
  std::vector<std::vector<int64_t>> found(static_cast<size_t>((rows + kChunk - 1) / kChunk));
  std::atomic<size_t> total{0};
  at::parallel_for(0, static_cast<int64_t>(found.size()), 1, [&](int64_t begin, int64_t end) {
    std::vector<float> expected(static_cast<size_t>(kBlockRows * width));
    for (int64_t c = begin; c < end && total.load(std::memory_order_relaxed) <= limit; ++c) {
      auto& mine = found[static_cast<size_t>(c)];
      const int64_t last = std::min(rows, (c + 1) * kChunk);
      for (int64_t r0 = c * kChunk; r0 < last; r0 += kBlockRows) {
        const int64_t n = std::min(kBlockRows, last - r0);
        fill.values(static_cast<uint64_t>(r0 * width), expected.data(),
                    static_cast<size_t>(n * width));
        for (int64_t r = 0; r < n; ++r) {
          if (std::memcmp(data + (r0 + r) * width, expected.data() + r * width,
                          static_cast<size_t>(width) * sizeof(float)) != 0) {
            mine.push_back(r0 + r);
          }
        }
      }
      total += mine.size();
    }
  });
  if (total.load() > limit) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(total.load());
  for (const auto& part : found) out.insert(out.end(), part.begin(), part.end());
  return out;
}

// `t`'s record as its changed rows, when that is under half the dense record's size.
bool add_changed_rows(Section& s, const std::string& name, const torch::Tensor& t,
                      const UniformFill& fill) {
  if (t.scalar_type() != torch::kFloat || t.dim() != 2 || t.size(0) == 0) return false;
  const int64_t width = t.size(1);
  const uint64_t row_bytes = static_cast<uint64_t>(width) * sizeof(float);
  const uint64_t dense = static_cast<uint64_t>(t.size(0)) * row_bytes;
  if (dense / 2 <= kFillBytes) return false;
  const auto rows = changed_rows(t, fill, (dense / 2 - kFillBytes) / (8 + row_bytes));
  if (!rows) return false;
  std::string head;
  put_bytes(head, name);
  put<int8_t>(head, kChangedRowsTag);
  put<int8_t>(head, static_cast<int8_t>(t.scalar_type()));
  put<uint32_t>(head, 2);
  for (auto d : t.sizes()) put<int64_t>(head, d);
  const uint64_t k = rows->size();
  put<uint64_t>(head, kFillBytes + k * (8 + row_bytes));
  put<uint64_t>(head, fill.state);
  put<double>(head, fill.lo);
  put<double>(head, fill.hi);
  put<uint64_t>(head, k);
  head.append(reinterpret_cast<const char*>(rows->data()), k * 8);
  s.add_owned(std::move(head));
  // The rows are written from the tensor, one piece per run of consecutive rows: copied
  // into the head they were up to half the table (20NG, 2M x 50: 170 MB at each save).
  const char* data = static_cast<const char*>(t.data_ptr());
  for (size_t i = 0; i < rows->size();) {
    size_t j = i + 1;
    while (j < rows->size() && (*rows)[j] == (*rows)[j - 1] + 1) ++j;
    s.add(std::string_view(data + static_cast<uint64_t>((*rows)[i]) * row_bytes,
                           (j - i) * row_bytes));
    i = j;
  }
  s.has_changed_rows = true;
  return true;
}

// Weights are stored as raw tensors (count; then name, dtype, shape, byte length, bytes):
// several times faster to write than a LibTorch archive (80 MB of fastText buckets:
// 0.5 s there), and every mismatch can be named. A tensor with a fill may be stored as
// its changed rows instead (add_changed_rows).
Section tensor_section(const NamedTensors& tensors, const TensorFills& fills) {
  Section s;
  std::string count;
  put<uint32_t>(count, static_cast<uint32_t>(tensors.size()));
  s.add_owned(std::move(count));
  for (const auto& [name, tensor] : tensors) {
    // A contiguous CPU tensor is its own storage here: no copy.
    s.tensors.push_back(tensor.detach().to(torch::kCPU).contiguous());
    const torch::Tensor& t = s.tensors.back();
    auto fill = fills.find(name);
    if (fill != fills.end() && add_changed_rows(s, name, t, fill->second)) continue;
    std::string head;
    put_bytes(head, name);
    put<int8_t>(head, static_cast<int8_t>(t.scalar_type()));
    put<uint32_t>(head, static_cast<uint32_t>(t.dim()));
    for (auto d : t.sizes()) put<int64_t>(head, d);
    const size_t n = t.numel() * t.element_size();
    put<uint64_t>(head, n);
    s.add_owned(std::move(head));
    s.add(std::string_view(static_cast<const char*>(t.data_ptr()), n));
  }
  return s;
}

}  // namespace

std::string module_bytes(const torch::nn::Module& module) {
  return tensors_bytes(named_tensors(module));
}

std::string tensors_bytes(const NamedTensors& tensors) {
  const Section s = tensor_section(tensors, {});
  std::string out;
  out.reserve(s.size);  // exactly: growing by doubling would hold two copies of a table
  for (auto piece : s.pieces) out.append(piece);
  return out;
}

std::string optimizer_bytes(const torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
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

// Reads module_bytes' layout from a Cursor or a FileCursor into the module's tensors.
template <class Reader>
TensorFills load_tensors(Reader& reader, torch::nn::Module& module, const std::string& path) {
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
    auto it = wanted.find(name);
    if (it == wanted.end()) {
      throw Error(fmt::format("{}: the weights do not fit this model: it has no tensor '{}'", path,
                              name));
    }
    torch::Tensor& target = it->second;
    if (target.sizes().vec() != shape || target.scalar_type() != dtype) {
      throw Error(fmt::format("{}: the weights do not fit this model: '{}' has shape [{}] in the "
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
  if (!wanted.empty()) {
    throw Error(fmt::format("{}: the weights do not fit this model: '{}' is missing", path,
                            wanted.begin()->first));
  }
  return fills;
}

}  // namespace

TensorFills load_module_bytes(torch::nn::Module& module, const std::string& bytes,
                              const std::string& path) {
  Cursor cursor(bytes, path);
  return load_tensors(cursor, module, path);
}

TensorFills load_module_section(torch::nn::Module& module, const SectionRef& section) {
  FileCursor cursor(section);
  return load_tensors(cursor, module, section.path);
}

TensorFills load_model_weights(torch::nn::Module& module, const StoredCheckpoint& checkpoint,
                               const std::string& path) {
  if (auto it = checkpoint.on_disk.find("model"); it != checkpoint.on_disk.end()) {
    return load_module_section(module, it->second);
  } else if (auto blob = checkpoint.blobs.find("model"); blob != checkpoint.blobs.end()) {
    return load_module_bytes(module, blob->second, path);
  } else {
    throw Error(fmt::format("{} holds no model weights", path));
  }
}

void load_optimizer_bytes(torch::optim::Optimizer& optimizer, const std::string& bytes,
                          const std::string& path) {
  try {
    std::istringstream in(bytes);
    torch::serialize::InputArchive archive;
    archive.load_from(in);
    optimizer.load(archive);
  } catch (const c10::Error& e) {
    throw Error(fmt::format("{}: the optimizer state does not fit: {}", path,
                            e.what_without_backtrace()));
  }
}

void save_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  // Sections in name order, each written straight from its blob or tensors: the file's
  // bytes are never gathered in memory. The CRC takes one read pass before the write.
  std::map<std::string, Section> sections;
  for (const auto& [name, bytes] : checkpoint.blobs) sections[name].add(bytes);
  for (const auto& [name, tensors] : checkpoint.tensor_blobs) {
    if (sections.count(name)) {
      throw Error(fmt::format("{}: checkpoint section '{}' given twice", path, name));
    }
    auto fills = checkpoint.fills.find(name);
    sections.emplace(
        name,
        tensor_section(tensors, fills == checkpoint.fills.end() ? TensorFills{} : fills->second));
  }
  std::string head;
  put_bytes(head, checkpoint.meta.dump());
  put<uint32_t>(head, static_cast<uint32_t>(sections.size()));
  uint64_t length = head.size();
  uint32_t crc = crc32_of(head);
  for (auto& [name, section] : sections) {
    std::string framing;
    put_bytes(framing, name);
    put<uint64_t>(framing, section.size);
    section.framing.push_front(std::move(framing));
    section.pieces.insert(section.pieces.begin(), section.framing.front());
    for (auto piece : section.pieces) crc = crc32_update(crc, piece);
    length += section.framing.front().size() + section.size;
  }
  const bool changed_rows = std::any_of(sections.begin(), sections.end(), [](const auto& entry) {
    return entry.second.has_changed_rows;
  });
  const std::string header = checkpoint_header(changed_rows ? kCheckpointVersion : 1, length, crc);
  AtomicFile file(path);
  file.write(header);
  file.write(head);
  for (const auto& [name, section] : sections) {
    for (auto piece : section.pieces) file.write(piece);
  }
  file.commit();
}

Checkpoint load_checkpoint(const std::string& path,
                           const std::vector<std::string>& leave_on_disk) {
  return Checkpoint(read_checkpoint(path, leave_on_disk));
}

}  // namespace sift
