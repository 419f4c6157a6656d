// The processes that train one run together, as the training loop sees them. The base
// class is a group of one: rank 0 of 1, every collective answers from this process's own
// values, so the loop has no single-process branches. Distributed (distributed.h, c10d)
// is the group of several processes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sift {

class Group {
 public:
  virtual ~Group() = default;
  virtual int64_t rank() const { return 0; }
  virtual int64_t world_size() const { return 1; }
  bool is_primary() const { return rank() == 0; }
  // Whether other processes take part.
  virtual bool is_group() const { return false; }
  // Element-wise sums over the ranks, in place.
  virtual void sum(std::vector<double>&) {}
  virtual void sum(std::vector<int64_t>&) {}
  // Rank 0's value of `flag` on every rank.
  virtual bool primary_says(bool flag) { return flag; }
  // Every rank's bytes, in rank order, on every rank.
  virtual std::vector<std::string> all_gather(const std::string& bytes) { return {bytes}; }
  // Every rank's values (of any number), one rank after another, on every rank.
  std::vector<int64_t> all_gather_int64s(const int64_t* values, size_t n);
};

// A checkpoint blob's name for a rank: rank 0 keeps the single-process names ("data",
// "rng"), rank r > 0 adds ".r".
std::string rank_blob(const std::string& name, int64_t rank);

// Collective: every rank passes its own blobs (named as for rank 0); rank 0 receives
// all of them under rank_blob names. The others get nothing back.
std::map<std::string, std::string> gather_rank_blobs(
    Group& group, const std::map<std::string, std::string>& mine);

}  // namespace sift
