#include "datasets/partition.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <numeric>
#include <random>

#include "core/error.h"

namespace sift {
namespace {

bool sniff_compressed(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char m[4] = {0, 0, 0, 0};
  in.read(reinterpret_cast<char*>(m), 4);
  const auto n = in.gcount();
  return (n >= 2 && m[0] == 0x1f && m[1] == 0x8b) ||
         (n >= 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd);
}

size_t least_loaded(const std::vector<uint64_t>& load) {
  return static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
}

}  // namespace

std::vector<ShardInfo> describe_shards(const std::vector<std::string>& files) {
  std::vector<ShardInfo> shards;
  for (const auto& f : files) {
    struct stat st {};
    if (::stat(f.c_str(), &st) != 0) {
      throw Error(fmt::format("cannot open {}: {}", f, std::strerror(errno)));
    }
    ShardInfo s;
    s.path = f;
    s.bytes = static_cast<uint64_t>(st.st_size);
    s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    s.compressed = sniff_compressed(f);
    shards.push_back(std::move(s));
  }
  return shards;
}

std::vector<std::vector<FilePiece>> partition_shards(const std::vector<ShardInfo>& shards,
                                                     size_t readers, bool splittable,
                                                     uint64_t seed, uint64_t epoch, bool shuffle) {
  std::vector<size_t> order(shards.size());
  std::iota(order.begin(), order.end(), 0);
  if (shuffle) {
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + epoch);
    std::shuffle(order.begin(), order.end(), rng);
  }
  std::vector<std::vector<FilePiece>> plan(readers);
  std::vector<uint64_t> load(readers, 0);
  // Whole shards first: they cannot be cut, the byte ranges then even out the load.
  std::vector<size_t> cuttable;
  for (size_t i : order) {
    if (splittable && !shards[i].compressed) {
      cuttable.push_back(i);
      continue;
    }
    const size_t k = least_loaded(load);
    plan[k].push_back({shards[i].path, 0, FilePiece::kToEnd});
    load[k] += shards[i].bytes;
  }
  uint64_t plain = 0;
  for (size_t i : cuttable) plain += shards[i].bytes;
  if (plain == 0) return plan;
  const uint64_t total = plain + std::accumulate(load.begin(), load.end(), uint64_t{0});
  const uint64_t target = (total + readers - 1) / readers;
  std::vector<uint64_t> deficit(readers);
  uint64_t deficit_sum = 0;
  for (size_t k = 0; k < readers; ++k) {
    deficit[k] = load[k] < target ? target - load[k] : 0;
    deficit_sum += deficit[k];
  }
  // Reader k takes bytes [cut[k], cut[k+1]) of the plain shards laid end to end.
  std::vector<uint64_t> cut(readers + 1, 0);
  unsigned __int128 running = 0;
  for (size_t k = 0; k < readers; ++k) {
    running += deficit_sum > 0 ? deficit[k] : 1;
    const uint64_t denominator = deficit_sum > 0 ? deficit_sum : readers;
    cut[k + 1] = static_cast<uint64_t>(running * plain / denominator);
  }
  uint64_t start = 0;  // of the current shard in the concatenation
  for (size_t i : cuttable) {
    const uint64_t end = start + shards[i].bytes;
    for (size_t k = 0; k < readers; ++k) {
      const uint64_t lo = std::max(start, cut[k]), hi = std::min(end, cut[k + 1]);
      if (lo >= hi) continue;
      plan[k].push_back({shards[i].path, lo - start, hi == end ? FilePiece::kToEnd : hi - start});
    }
    start = end;
  }
  return plan;
}

}  // namespace sift
