// Splitting a data split's shard files among R ranks x W workers so that every record
// is read exactly once per epoch, with every reader given about the same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/record_reader.h"

namespace sift {

struct ShardInfo {
  std::string path;
  uint64_t bytes = 0;       // size on disk
  bool compressed = false;  // gzip or zstd: readable only from the start
  int64_t mtime_ns = 0;     // with bytes, detects a shard that changed under a resume
};

// Stats each file and sniffs its compression. Throws sift::Error naming a missing file.
std::vector<ShardInfo> describe_shards(const std::vector<std::string>& files);

// The pieces each of `readers` readers reads in one epoch, reader k = rank * W + worker.
// Shard order is shuffled per epoch from (seed, epoch) when `shuffle`. Plain shards are
// cut by byte range (a record belongs to the piece holding its first byte), so readers
// get equal bytes to within one record; compressed shards, and every shard when
// `splittable` is false (quoted CSV records may span lines), go whole to the reader
// with the fewest bytes so far.
std::vector<std::vector<FilePiece>> partition_shards(const std::vector<ShardInfo>& shards,
                                                     size_t readers, bool splittable,
                                                     uint64_t seed, uint64_t epoch, bool shuffle);

}  // namespace sift
