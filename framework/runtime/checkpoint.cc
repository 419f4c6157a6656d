#include "framework/runtime/checkpoint.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/atomic_file.h"
#include "core/crc32.h"
#include "core/error.h"
#include "models/init.h"

namespace sift {
namespace {

constexpr char kMagic[8] = {'S', 'I', 'F', 'T', 'C', 'K', 'P', 'T'};

template <class T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

void put_bytes(std::string& out, const std::string& bytes) {
  put<uint64_t>(out, bytes.size());
  out += bytes;
}

// Reads fields from the body, refusing to run past its end.
class Cursor {
 public:
  Cursor(std::string_view data, const std::string& path) : data_(data), path_(path) {}
  template <class T>
  T get() {
    T v;
    need(sizeof(T));
    std::memcpy(&v, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string get_bytes() { return std::string(get_view()); }
  void read_into(char* out, uint64_t n) {
    need(n);
    std::memcpy(out, data_.data() + pos_, n);
    pos_ += n;
  }
  // A length-prefixed field, viewed in place.
  std::string_view get_view() {
    const auto n = get<uint64_t>();
    need(n);
    const std::string_view v = data_.substr(pos_, n);
    pos_ += n;
    return v;
  }

 private:
  void need(uint64_t n) const {
    if (n > data_.size() - pos_) throw Error(fmt::format("{}: corrupted checkpoint", path_));
  }
  std::string_view data_;
  const std::string& path_;
  size_t pos_ = 0;
};

// The same reads from a file's body, straight into their strings: a loaded checkpoint is
// held once, not as the file's bytes and again as its sections.
class FileCursor {
 public:
  // Reads the `length` bytes that start at `offset`.
  FileCursor(std::ifstream& in, uint64_t offset, uint64_t length, const std::string& path)
      : in_(in), position_(offset), left_(length), path_(path) {
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(offset));
  }
  template <class T>
  T get() {
    T v;
    read_into(reinterpret_cast<char*>(&v), sizeof(T));
    return v;
  }
  std::string get_bytes() {
    const auto n = get<uint64_t>();
    if (n > left_) throw Error(fmt::format("{}: corrupted checkpoint", path_));
    std::string s(n, '\0');
    read_into(s.data(), n);
    return s;
  }
  void read_into(char* out, uint64_t n) {
    if (n > left_ || !in_.read(out, static_cast<std::streamsize>(n))) {
      throw Error(fmt::format("{}: corrupted checkpoint", path_));
    }
    position_ += n;
    left_ -= n;
  }
  void skip(uint64_t n) {
    if (n > left_ || !in_.seekg(static_cast<std::streamoff>(n), std::ios::cur)) {
      throw Error(fmt::format("{}: corrupted checkpoint", path_));
    }
    position_ += n;
    left_ -= n;
  }
  uint64_t position() const { return position_; }

 private:
  std::ifstream& in_;
  uint64_t position_;
  uint64_t left_;
  const std::string& path_;
};

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

// In place of a dtype: the tensor is stored as the rows that differ from a uniform fill
// (ScalarType values are never negative).
constexpr int8_t kChangedRowsTag = -1;

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

// After the tag and the usual dtype, shape and byte length: the fill (state, lo, hi), the
// number of rows k, their indices and their values.
constexpr uint64_t kFillBytes = 3 * 8 + 8;

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

// Reads a changed-rows record's payload (add_changed_rows) into `target`: the fill, then
// the rows that differ from it. Returns the fill.
template <class Reader>
UniformFill read_changed_rows(Reader& reader, torch::Tensor& target, uint64_t bytes,
                              const std::string& name, const std::string& path) {
  const auto corrupted = [&] {
    return Error(fmt::format("{}: corrupted checkpoint (tensor '{}')", path, name));
  };
  const int64_t rows = target.size(0), width = target.size(1);
  const uint64_t row_bytes = static_cast<uint64_t>(width) * sizeof(float);
  if (bytes < kFillBytes) throw corrupted();
  UniformFill fill;
  fill.state = reader.template get<uint64_t>();
  fill.lo = reader.template get<double>();
  fill.hi = reader.template get<double>();
  const auto k = reader.template get<uint64_t>();
  if (k > static_cast<uint64_t>(rows) || bytes != kFillBytes + k * (8 + row_bytes)) {
    throw corrupted();
  }
  std::vector<int64_t> indices(k);
  reader.read_into(reinterpret_cast<char*>(indices.data()), k * 8);
  for (uint64_t i = 0; i < k; ++i) {
    if (indices[i] < 0 || indices[i] >= rows || (i > 0 && indices[i] <= indices[i - 1])) {
      throw corrupted();
    }
  }
  std::vector<char> values(k * row_bytes);
  reader.read_into(values.data(), values.size());
  const bool in_place = target.is_cpu() && target.is_contiguous();
  torch::Tensor dense = in_place ? target : torch::empty(target.sizes(), torch::kFloat);
  refill_(dense, fill);
  char* data = static_cast<char*>(dense.data_ptr());
  for (uint64_t i = 0; i < k; ++i) {
    std::memcpy(data + static_cast<uint64_t>(indices[i]) * row_bytes, &values[i * row_bytes],
                row_bytes);
  }
  if (!in_place) target.copy_(dense);
  return fill;
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
    const std::string name = reader.get_bytes();
    const auto tag = reader.template get<int8_t>();
    const bool changed_rows = tag == kChangedRowsTag;
    const auto dtype =
        static_cast<torch::ScalarType>(changed_rows ? reader.template get<int8_t>() : tag);
    std::vector<int64_t> shape(reader.template get<uint32_t>());
    for (auto& d : shape) d = reader.template get<int64_t>();
    const auto bytes = reader.template get<uint64_t>();
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
    if (changed_rows) {
      if (dtype != torch::kFloat || shape.size() != 2) {
        throw Error(fmt::format("{}: corrupted checkpoint (tensor '{}')", path, name));
      }
      fills[name] = read_changed_rows(reader, target, bytes, name, path);
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
  FileCursor cursor(*section.file, section.offset, section.size, section.path);
  return load_tensors(cursor, module, section.path);
}

TensorFills load_model_weights(torch::nn::Module& module, const Checkpoint& checkpoint,
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
  std::string header(kMagic, sizeof(kMagic));
  put<uint32_t>(header, changed_rows ? kCheckpointVersion : 1);
  put<uint64_t>(header, length);
  put<uint32_t>(header, crc);
  AtomicFile file(path);
  file.write(header);
  file.write(head);
  for (const auto& [name, section] : sections) {
    for (auto piece : section.pieces) file.write(piece);
  }
  file.commit();
}

namespace {

// CRC-32 of the next `length` bytes of `in`, read in 1 MiB pieces.
uint32_t crc32_of_stream(std::ifstream& in, uint64_t length) {
  std::vector<char> buffer(1 << 20);
  uint32_t crc = 0;
  while (length > 0 && in) {
    const auto n = static_cast<std::streamsize>(std::min<uint64_t>(length, buffer.size()));
    in.read(buffer.data(), n);
    crc = crc32_update(crc, std::string_view(buffer.data(), static_cast<size_t>(in.gcount())));
    length -= static_cast<uint64_t>(in.gcount());
  }
  return crc;
}

}  // namespace

Checkpoint load_checkpoint(const std::string& path,
                           const std::vector<std::string>& leave_on_disk) {
  auto file = std::make_shared<std::ifstream>(path, std::ios::binary);
  std::ifstream& in = *file;
  if (!in) throw Error(fmt::format("cannot open checkpoint {}: {}", path, std::strerror(errno)));
  in.seekg(0, std::ios::end);
  const auto size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  constexpr size_t kHeader = sizeof(kMagic) + 4 + 8 + 4;
  char header[kHeader] = {};
  in.read(header, static_cast<std::streamsize>(std::min<uint64_t>(size, kHeader)));
  if (size < sizeof(kMagic) || std::memcmp(header, kMagic, sizeof(kMagic)) != 0) {
    throw Error(fmt::format("{} is not a Sift checkpoint", path));
  }
  if (size < kHeader) throw Error(fmt::format("{}: truncated checkpoint", path));
  uint32_t version, crc;
  uint64_t length;
  std::memcpy(&version, header + 8, 4);
  std::memcpy(&length, header + 12, 8);
  std::memcpy(&crc, header + 20, 4);
  if (version > kCheckpointVersion) {
    throw Error(fmt::format("{}: checkpoint format version {} is newer than this build "
                            "supports ({})",
                            path, version, kCheckpointVersion));
  }
  if (size - kHeader != length) {
    throw Error(fmt::format("{}: truncated checkpoint ({} of {} bytes)", path, size - kHeader,
                            length));
  }
  // Checked before anything is parsed: a damaged length field is reported as damage.
  if (crc32_of_stream(in, length) != crc) {
    throw Error(fmt::format("{}: corrupted checkpoint (checksum mismatch)", path));
  }
  FileCursor cursor(in, kHeader, length, path);
  Checkpoint checkpoint;
  checkpoint.meta = nlohmann::json::parse(cursor.get_bytes(), nullptr, /*allow_exceptions=*/false);
  if (checkpoint.meta.is_discarded()) throw Error(fmt::format("{}: corrupted checkpoint", path));
  const auto sections = cursor.get<uint32_t>();
  for (uint32_t i = 0; i < sections; ++i) {
    std::string name = cursor.get_bytes();
    if (std::find(leave_on_disk.begin(), leave_on_disk.end(), name) == leave_on_disk.end()) {
      checkpoint.blobs[name] = cursor.get_bytes();
      continue;
    }
    const auto bytes = cursor.get<uint64_t>();
    checkpoint.on_disk[name] = SectionRef{path, file, cursor.position(), bytes};
    cursor.skip(bytes);
  }
  return checkpoint;
}

}  // namespace sift
