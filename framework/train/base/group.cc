#include "framework/train/base/group.h"

#include <fmt/format.h>

#include <cstring>

namespace sift {

std::vector<int64_t> Group::all_gather_int64s(const int64_t* values, size_t n) {
  std::vector<int64_t> all;
  const char* bytes = reinterpret_cast<const char*>(values);
  for (const std::string& theirs : all_gather(std::string(bytes, n * sizeof(int64_t)))) {
    const size_t before = all.size(), n_theirs = theirs.size() / sizeof(int64_t);
    all.resize(before + n_theirs);
    std::memcpy(all.data() + before, theirs.data(), n_theirs * sizeof(int64_t));
  }
  return all;
}

std::string rank_blob(const std::string& name, int64_t rank) {
  return rank == 0 ? name : fmt::format("{}.{}", name, rank);
}

std::map<std::string, std::string> gather_rank_blobs(
    Group& group, const std::map<std::string, std::string>& mine) {
  if (!group.is_group()) return mine;
  std::map<std::string, std::string> out;
  // The same names in the same order on every rank (std::map): one all-gather per name.
  for (const auto& [name, bytes] : mine) {
    auto all = group.all_gather(bytes);
    if (!group.is_primary()) continue;
    for (size_t r = 0; r < all.size(); ++r)
      out[rank_blob(name, static_cast<int64_t>(r))] = std::move(all[r]);
  }
  return out;
}

}  // namespace sift
