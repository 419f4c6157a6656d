#include "datasets/shard_writer.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>

#include "core/error.h"

namespace sift {
namespace {

// Text is handed to the file or compressor in blocks this large: few calls, and big
// enough for zstd to work on whole blocks.
constexpr size_t kBufferBytes = 1 << 20;

uint64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// std::greater on (bytes, index): the smallest byte count, then the lowest index, on top.
using HeapOrder = std::greater<std::pair<uint64_t, int>>;

}  // namespace

Compression parse_compression(std::string_view name) {
  if (name.empty() || name == "none") return Compression::kNone;
  if (name == "gz" || name == "gzip") return Compression::kGzip;
  if (name == "zst" || name == "zstd") return Compression::kZstd;
  throw Error(fmt::format("unknown compression '{}' (use gz, zst or none)", name));
}

std::string shard_path(const std::string& prefix, int index, int count, Compression c) {
  const char* suffix = c == Compression::kGzip ? ".gz" : c == Compression::kZstd ? ".zst" : "";
  return fmt::format("{}-{:05d}-of-{:05d}.txt{}", prefix, index, count, suffix);
}

// ---------------------------------------------------------------------------------
// TextFileWriter

TextFileWriter::TextFileWriter(std::string path, Compression compression)
    : path_(std::move(path)), compression_(compression) {
  buffer_.reserve(kBufferBytes + 4096);
  file_.emplace(path_);  // a unique temporary name beside path_, renamed by commit()
  if (compression_ == Compression::kGzip) {
    gz_ = std::make_unique<z_stream>();
    // windowBits 15 + 16: a gzip header and trailer (CRC-32, size), as gzopen writes.
    if (deflateInit2(gz_.get(), 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      gz_.reset();
      fail("zlib initialisation failed");
    }
    out_.resize(256 * 1024);
  }
  if (compression_ == Compression::kZstd) {
    zstd_ = ZSTD_createCCtx();
    if (zstd_ == nullptr)
      throw Error(fmt::format("cannot write {}: zstd initialisation failed", path_));
    ZSTD_CCtx_setParameter(zstd_, ZSTD_c_compressionLevel, 3);
    ZSTD_CCtx_setParameter(zstd_, ZSTD_c_checksumFlag, 1);  // readers detect corruption
    out_.resize(ZSTD_CStreamOutSize());
  }
}

TextFileWriter::~TextFileWriter() {
  if (zstd_ != nullptr) ZSTD_freeCCtx(zstd_);
  if (gz_ != nullptr) deflateEnd(gz_.get());
  // file_ (AtomicFile) removes its temporary file itself unless committed.
}

void TextFileWriter::fail(const std::string& what) {
  throw Error(fmt::format("cannot write {}: {}", path_, what));
}

void TextFileWriter::deflate_buffer(bool end) {
  gz_->next_in = reinterpret_cast<Bytef*>(buffer_.data());
  gz_->avail_in = static_cast<uInt>(buffer_.size());
  for (;;) {
    gz_->next_out = reinterpret_cast<Bytef*>(out_.data());
    gz_->avail_out = static_cast<uInt>(out_.size());
    const int rc = deflate(gz_.get(), end ? Z_FINISH : Z_NO_FLUSH);
    if (rc == Z_STREAM_ERROR) fail("zlib error");
    file_->write(std::string_view(out_.data(), out_.size() - gz_->avail_out));
    // Done when all input is consumed and, at the end, the stream is complete.
    if (end ? rc == Z_STREAM_END : gz_->avail_in == 0 && gz_->avail_out != 0) break;
  }
}

void TextFileWriter::write(std::string_view bytes) {
  if (committed_) throw Error(fmt::format("{}: write after commit", path_));
  buffer_.append(bytes.data(), bytes.size());
  if (buffer_.size() >= kBufferBytes) flush_buffer(false);
}

void TextFileWriter::flush_buffer(bool end) {
  switch (compression_) {
    case Compression::kNone:
      file_->write(buffer_);
      break;
    case Compression::kGzip:
      deflate_buffer(end);
      break;
    case Compression::kZstd: {
      ZSTD_inBuffer in{buffer_.data(), buffer_.size(), 0};
      const ZSTD_EndDirective mode = end ? ZSTD_e_end : ZSTD_e_continue;
      for (;;) {
        ZSTD_outBuffer out{out_.data(), out_.size(), 0};
        const size_t left = ZSTD_compressStream2(zstd_, &out, &in, mode);
        if (ZSTD_isError(left)) fail(ZSTD_getErrorName(left));
        file_->write(std::string_view(out_.data(), out.pos));
        // Done when all input is consumed and, at the end, the frame is complete.
        if (end ? left == 0 : in.pos == in.size) break;
      }
      break;
    }
  }
  buffer_.clear();
}

uint64_t TextFileWriter::commit() {
  if (committed_) return file_size(path_);
  flush_buffer(true);
  file_->commit();
  committed_ = true;
  return file_size(path_);
}

// ---------------------------------------------------------------------------------
// ShardWriter

ShardWriter::ShardWriter(ShardWriterOptions options)
    : options_(std::move(options)),
      shuffle_(std::max<size_t>(options_.shuffle_buffer, 1), options_.seed),
      header_pending_(options_.header) {
  if (options_.shards < 1)
    throw Error(fmt::format("shards must be at least 1, not {}", options_.shards));
  if (options_.shards > 99999)
    throw Error(fmt::format("at most 99999 shards, not {}", options_.shards));
  if (options_.prefix.empty()) throw Error("the output prefix is empty");
  if (options_.shuffle && options_.shuffle_buffer < 1)
    throw Error("the shuffle buffer must hold at least 1 line");
  files_.reserve(static_cast<size_t>(options_.shards));
  for (int i = 0; i < options_.shards; ++i) {
    WrittenShard info;
    info.path = shard_path(options_.prefix, i, options_.shards, options_.compression);
    files_.push_back(std::make_unique<TextFileWriter>(info.path, options_.compression));
    info_.push_back(std::move(info));
    heap_.emplace_back(0, i);  // all zero: already a valid heap
  }
}

ShardWriter::~ShardWriter() = default;  // uncommitted TextFileWriters remove their .tmp

void ShardWriter::add(std::string_view line) {
  if (finished_) throw Error("ShardWriter::add after finish");
  if (header_pending_) {
    header_pending_ = false;
    scratch_.assign(line.data(), line.size());
    scratch_ += '\n';
    for (size_t i = 0; i < files_.size(); ++i) {
      files_[i]->write(scratch_);
      info_[i].text_bytes += scratch_.size();
      heap_[i].first += scratch_.size();  // same for every shard: order unchanged
    }
    return;
  }
  if (!options_.shuffle) {
    emit(line);
    return;
  }
  if (shuffle_.full()) {
    shuffle_.pop(scratch_);
    emit(scratch_);
  }
  shuffle_.push(std::string(line));
}

void ShardWriter::emit(std::string_view line) {
  // Take the lightest shard off the heap, write, push it back with its new weight.
  std::pop_heap(heap_.begin(), heap_.end(), HeapOrder());
  auto& [bytes, index] = heap_.back();
  TextFileWriter& file = *files_[static_cast<size_t>(index)];
  file.write(line);
  file.write("\n");
  WrittenShard& info = info_[static_cast<size_t>(index)];
  info.lines += 1;
  info.text_bytes += line.size() + 1;
  bytes = info.text_bytes;
  std::push_heap(heap_.begin(), heap_.end(), HeapOrder());
}

std::vector<WrittenShard> ShardWriter::finish() {
  if (finished_) return info_;
  std::string line;
  while (!shuffle_.empty()) {
    shuffle_.pop(line);
    emit(line);
  }
  for (size_t i = 0; i < files_.size(); ++i) info_[i].file_bytes = files_[i]->commit();
  finished_ = true;
  return info_;
}

}  // namespace sift
