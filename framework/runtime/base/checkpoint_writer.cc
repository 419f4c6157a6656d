#include "framework/runtime/base/checkpoint_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <optional>
#include <string_view>

#include "core/atomic_file.h"
#include "core/crc32.h"
#include "core/error.h"
#include "framework/runtime/base/checkpoint_file.h"

namespace sift {

size_t TensorView::bytes() const {
  size_t n = element_size;
  for (const int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

namespace {

template <class T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

void put_bytes(std::string& out, const std::string& bytes) {
  put<uint64_t>(out, bytes.size());
  out += bytes;
}

// A piece of a section: bytes in memory, or a tensor's whose memory is fetched when
// the piece is written (TensorView::fetch).
struct Piece {
  std::string_view bytes;
  const TensorView* deferred = nullptr;
  const StreamedSection* stream = nullptr;  // instead: its bytes, bytes.size() of them

  std::string_view resolve() const {
    if (!deferred) return bytes;
    return std::string_view(static_cast<const char*>(deferred->fetch()), bytes.size());
  }
};

// A section's bytes as pieces pointing into its own framing strings (a deque: their
// addresses stay put) and into the tensors' memory. The pieces are a deque too: a table's
// changed rows are a piece a run, and a vector of them grown by doubling held 6.3 MB of
// sift-lite's SST-2 peak heap at a save (heaptrack), twice what they need.
struct Section {
  std::deque<std::string> framing;
  std::deque<Piece> pieces;
  uint64_t size = 0;
  bool has_changed_rows = false;  // a tensor is stored as changed rows: format version 2

  void add(std::string_view piece, const TensorView* deferred = nullptr,
           const StreamedSection* stream = nullptr) {
    pieces.push_back({piece, deferred, stream});
    size += piece.size();
  }
  void add_owned(std::string bytes) {
    framing.push_back(std::move(bytes));
    add(framing.back());
  }
};

void serially(int64_t n, const std::function<void(int64_t, int64_t)>& fn) { fn(0, n); }

// Hands `pieces` to `fn` in order, the small ones gathered in `buffer` into blocks of up
// to kBlockBytes. A table's changed rows are a piece each (40 bytes at dim 10): zlib's CRC
// and stdio's fwrite per piece took 15-23 and 12 ms of each 4 MB SST-2 checkpoint (load 5),
// several times the CRC of the same bytes at once (1.6 ms).
constexpr size_t kBlockBytes = size_t{1} << 18;
void in_blocks(const std::deque<Piece>& pieces, std::string& buffer,
               const std::function<void(std::string_view)>& fn) {
  buffer.clear();
  const auto take = [&](std::string_view piece) {
    if (buffer.size() + piece.size() > kBlockBytes && !buffer.empty()) {
      fn(buffer);
      buffer.clear();
    }
    if (piece.size() >= kBlockBytes) {
      fn(piece);  // as it is: a dense table is not copied
    } else {
      buffer.append(piece);
    }
  };
  for (const Piece& p : pieces) {
    if (!p.stream) {
      take(p.resolve());
      continue;
    }
    uint64_t given = 0;
    p.stream->write([&](std::string_view bytes) {
      given += bytes.size();
      if (given <= p.bytes.size()) take(bytes);
    });
    if (given != p.bytes.size()) {
      throw Error(fmt::format("checkpoint: a streamed section gave {} bytes, not the {} announced",
                              given, p.bytes.size()));
    }
  }
  if (!buffer.empty()) fn(buffer);
}

// The rows of a [rows, width] float tensor that differ from `fill`, in order; none
// (nullopt) when more than `limit` do. Each chunk's fill is recomputed in blocks
// (UniformFill::values) and compared row by row, bitwise: value by value with an early
// exit per row, a save's search over a fastText table took about 40 ms of each 4 MB
// SST-2 checkpoint.
std::optional<std::vector<int64_t>> changed_rows(const TensorView& t, const UniformFill& fill,
                                                 size_t limit, const ParallelFor& parallel) {
  const int64_t rows = t.shape[0], width = t.shape[1];
  const auto* data = static_cast<const float*>(t.data);
  constexpr int64_t kChunk = int64_t{1} << 14;
  constexpr int64_t kBlockRows = 256;
  std::vector<std::vector<int64_t>> found(static_cast<size_t>((rows + kChunk - 1) / kChunk));
  std::atomic<size_t> total{0};
  (parallel ? parallel : ParallelFor(serially))(
      static_cast<int64_t>(found.size()), [&](int64_t begin, int64_t end) {
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
bool add_changed_rows(Section& s, const TensorView& t, const UniformFill& fill,
                      const ParallelFor& parallel) {
  if (t.dtype != kFloatCode || t.shape.size() != 2 || t.shape[0] == 0) return false;
  const int64_t width = t.shape[1];
  const uint64_t row_bytes = static_cast<uint64_t>(width) * sizeof(float);
  const uint64_t dense = static_cast<uint64_t>(t.shape[0]) * row_bytes;
  if (dense / 2 <= kFillBytes) return false;
  const auto rows = changed_rows(t, fill, (dense / 2 - kFillBytes) / (8 + row_bytes), parallel);
  if (!rows) return false;
  std::string head;
  put_bytes(head, t.name);
  put<int8_t>(head, kChangedRowsTag);
  put<int8_t>(head, t.dtype);
  put<uint32_t>(head, 2);
  for (auto d : t.shape) put<int64_t>(head, d);
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
  const char* data = static_cast<const char*>(t.data);
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

// `t`'s record, dense: its bytes from its memory, or fetched as they are written.
void add_dense(Section& s, const TensorView& t) {
  std::string head;
  put_bytes(head, t.name);
  put<int8_t>(head, t.dtype);
  put<uint32_t>(head, static_cast<uint32_t>(t.shape.size()));
  for (auto d : t.shape) put<int64_t>(head, d);
  const size_t n = t.bytes();
  put<uint64_t>(head, n);
  s.add_owned(std::move(head));
  if (t.fetch) {
    s.add(std::string_view(nullptr, n), &t);
  } else {
    s.add(std::string_view(static_cast<const char*>(t.data), n));
  }
}

// Weights are stored as raw tensors (count; then name, dtype, shape, byte length, bytes):
// several times faster to write than a LibTorch archive (80 MB of fastText buckets:
// 0.5 s there), and every mismatch can be named. A tensor with a fill may be stored as
// its changed rows instead (add_changed_rows).
Section tensor_section(const std::vector<TensorView>& tensors, const TensorFills& fills,
                       const ParallelFor& parallel) {
  Section s;
  std::string count;
  put<uint32_t>(count, static_cast<uint32_t>(tensors.size()));
  s.add_owned(std::move(count));
  // A deferred tensor with a fill (run.shard: parameters' fastText table) is fetched now,
  // when no deferred tensor follows it (its bytes stay until the next fetch), so that its
  // changed rows can size its record: the file data parallelism writes.
  size_t last_deferred = tensors.size();
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].fetch) last_deferred = i;
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorView& t = tensors[i];
    auto fill = fills.find(t.name);
    if (fill != fills.end() && t.fetch && i == last_deferred) {
      TensorView fetched = t;
      fetched.data = t.fetch();
      fetched.fetch = nullptr;
      if (!add_changed_rows(s, fetched, fill->second, parallel)) add_dense(s, fetched);
      continue;
    }
    if (!t.fetch && fill != fills.end() && add_changed_rows(s, t, fill->second, parallel)) {
      continue;
    }
    add_dense(s, t);
  }
  return s;
}

}  // namespace

std::string tensor_records(const std::vector<TensorView>& tensors) {
  const Section s = tensor_section(tensors, {}, {});
  std::string out;
  out.reserve(s.size);  // exactly: growing by doubling would hold two copies of a table
  for (const Piece& piece : s.pieces) out.append(piece.resolve());
  return out;
}

void write_checkpoint(const std::string& path, const CheckpointParts& parts,
                      const ParallelFor& parallel) {
  std::map<std::string, Section> sections;
  for (const auto& [name, bytes] : parts.blobs) sections[name].add(bytes);
  const auto given_twice = [&](const std::string& name) {
    if (sections.count(name)) {
      throw Error(fmt::format("{}: checkpoint section '{}' given twice", path, name));
    }
  };
  for (const auto& [name, stream] : parts.streams) {
    given_twice(name);
    sections[name].add(std::string_view(nullptr, stream.size), nullptr, &stream);
  }
  for (const auto& [name, tensors] : parts.tensors) {
    given_twice(name);
    auto fills = parts.fills.find(name);
    sections.emplace(
        name, tensor_section(tensors, fills == parts.fills.end() ? TensorFills{} : fills->second,
                             parallel));
  }
  std::string head;
  put_bytes(head, parts.meta.dump());
  put<uint32_t>(head, static_cast<uint32_t>(sections.size()));
  uint64_t length = head.size();
  for (auto& [name, section] : sections) {
    std::string framing;
    put_bytes(framing, name);
    put<uint64_t>(framing, section.size);
    section.framing.push_front(std::move(framing));
    section.pieces.push_front(Piece{section.framing.front()});
    length += section.framing.front().size() + section.size;
  }
  const bool changed_rows = std::any_of(sections.begin(), sections.end(), [](const auto& entry) {
    return entry.second.has_changed_rows;
  });
  const uint32_t version = changed_rows ? kCheckpointVersion : 1;
  // The CRC is taken as the bytes go out (a deferred tensor's are fetched once), and the
  // header, written first with none, is written again with it.
  AtomicFile file(path);
  file.write(checkpoint_header(version, length, 0));
  file.write(head);
  uint32_t crc = crc32_of(head);
  std::string buffer;
  buffer.reserve(kBlockBytes);
  for (const auto& [name, section] : sections) {
    in_blocks(section.pieces, buffer, [&](std::string_view block) {
      crc = crc32_update(crc, block);
      file.write(block);
    });
  }
  file.rewrite_start(checkpoint_header(version, length, crc));
  file.commit();
}

}  // namespace sift
