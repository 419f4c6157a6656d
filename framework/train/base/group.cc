#include "framework/train/base/group.h"

#include <fmt/format.h>

namespace sift {

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
