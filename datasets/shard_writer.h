// Splits a stream of text lines into N shard files, balanced by bytes, optionally
// compressed and shuffled, with memory bounded whatever the input size.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/atomic_file.h"
#include "datasets/shuffle_buffer.h"

struct z_stream_s;   // zlib's z_stream
struct ZSTD_CCtx_s;  // zstd's ZSTD_CCtx

namespace sift {

enum class Compression { kNone, kGzip, kZstd };

// "none"/"" -> kNone, "gz"/"gzip" -> kGzip, "zst"/"zstd" -> kZstd; throws sift::Error.
Compression parse_compression(std::string_view name);

// PREFIX-00003-of-00008.txt[.gz|.zst]: the name both ShardWriter and sift-gen-corpus use.
std::string shard_path(const std::string& prefix, int index, int count, Compression c);

// One output text file, plain, gzip (level 6) or zstd (level 3). Bytes go through an
// AtomicFile (a unique PATH.tmp-XXXXXX, never a planted symlink), renamed to PATH by
// commit(); destroyed without commit() it removes its temporary file, so a failed or
// interrupted run never leaves a complete-looking shard behind.
class TextFileWriter {
 public:
  TextFileWriter(std::string path, Compression compression);  // throws sift::Error
  ~TextFileWriter();
  TextFileWriter(const TextFileWriter&) = delete;
  TextFileWriter& operator=(const TextFileWriter&) = delete;

  // Text bytes, uncompressed; buffered, so small writes are cheap.
  void write(std::string_view bytes);
  // Flushes, finishes the compressed stream, renames; returns the file's size in bytes.
  uint64_t commit();

 private:
  void flush_buffer(bool end);
  [[noreturn]] void fail(const std::string& what);

  void deflate_buffer(bool end);

  std::string path_;
  Compression compression_;
  std::string buffer_;              // pending text bytes
  std::optional<AtomicFile> file_;  // the output, compressed or not
  std::unique_ptr<z_stream_s> gz_;  // gzip: zlib's deflate with a gzip wrapper
  ZSTD_CCtx_s* zstd_ = nullptr;
  std::vector<char> out_;  // compressed bytes on their way to file_
  bool committed_ = false;
};

struct ShardWriterOptions {
  std::string prefix;  // shard i is shard_path(prefix, i, shards, compression)
  int shards = 1;
  Compression compression = Compression::kNone;
  // Bounded shuffle: lines pass through a buffer of shuffle_buffer lines and leave it
  // in a seeded random order. A line can move at most about that far, so the order
  // is only locally random; memory is that many lines, not the input.
  bool shuffle = false;
  size_t shuffle_buffer = 100000;
  uint64_t seed = 0;
  // The first line given to add() is a header: copied to the top of every shard and
  // neither shuffled nor counted in WrittenShard::lines.
  bool header = false;
};

struct WrittenShard {
  std::string path;
  uint64_t lines = 0;       // data lines (the header excluded)
  uint64_t text_bytes = 0;  // uncompressed bytes, newlines and header included
  uint64_t file_bytes = 0;  // bytes on disk
};

// Balancing: each line goes to the shard with the fewest text bytes so far (ties to
// the lowest index), so in the end any two shards differ by at most the longest line
// plus its newline. Lines are written with a "\n" terminator. All shard files are
// created by the constructor (so an unwritable prefix fails before any input is read)
// and appear under their final names only when finish() succeeds.
class ShardWriter {
 public:
  explicit ShardWriter(ShardWriterOptions options);  // throws sift::Error
  ~ShardWriter();
  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;

  // One line, without its newline.
  void add(std::string_view line);
  // Drains the shuffle buffer, finishes and renames every shard.
  std::vector<WrittenShard> finish();

 private:
  void emit(std::string_view line);

  ShardWriterOptions options_;
  std::vector<std::unique_ptr<TextFileWriter>> files_;
  std::vector<WrittenShard> info_;
  // Min-heap of (text bytes, shard index): the next line goes to the top.
  std::vector<std::pair<uint64_t, int>> heap_;
  ShuffleBuffer<std::string> shuffle_;
  std::string scratch_;
  bool header_pending_;
  bool finished_ = false;
};

}  // namespace sift
