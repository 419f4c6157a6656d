// What the multi-host tests share: processes started on a node of a NetNodes network (or
// on this host), waited for with a deadline so that no test outlives its bound, and the
// training arguments of a small SMS spam run.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "net_nodes.h"

namespace sift::testing {

struct Proc {
  pid_t pid = -1;
  std::string out, err;  // files
};

struct Ended {
  int status = -1;  // exit status; 128 + signal when killed; -2: still running at the deadline
  std::string out, err;
  double seconds = 0;  // since the fault (or the start), see Cluster::mark
};

std::ostream& operator<<(std::ostream& os, const Ended& e);

// The lines of `err` that start with "sift: error:".
std::vector<std::string> error_lines(const std::string& err);

class Cluster : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // A network of `nodes`; false (and `why_not`) where it cannot be made.
  bool make_network(int nodes, std::string& why_not);

  // `sift ARGS` on `node` with torchrun's variables for `rank` of `world` (rank 0 on node
  // 0's address) and `extra` variables; `mounts` as NetNodes::on_node.
  Proc start_rank(int node, int rank, int world, const std::string& args,
                  const std::vector<std::string>& extra = {},
                  const std::vector<std::string>& mounts = {});
  // `sift ARGS` on `node` (no rank variables: e.g. `sift launch`).
  Proc start_on_node(int node, const std::string& args, const std::vector<std::string>& env = {});
  // `sift ARGS` on this host.
  Proc start_here(const std::string& args, const std::vector<std::string>& env = {});
  // Waits at most `seconds` (then kills it: status -2).
  Ended wait(const Proc& p, double seconds);

  // From now on, Ended::seconds counts from here (the fault).
  void mark() { mark_ = std::chrono::steady_clock::now(); }
  // Waits until `path` exists, at most `seconds`.
  static bool wait_for(const std::string& path, double seconds);
  // The pids of `parent`'s children (a launch's ranks).
  static std::vector<pid_t> children(pid_t parent);

  // `train` of SMS spam into dir_/NAME, one thread, short distributed timeout.
  std::string train_args(const std::string& name, const std::string& extra = "") const;
  // The step last.ckpt of run folder `name` holds, or -1.
  int64_t saved_step(const std::string& name) const;

  std::string dir_;
  std::unique_ptr<NetNodes> net_;
  std::vector<pid_t> started_;

 private:
  Proc spawn(const std::vector<std::string>& argv);
  int count_ = 0;
  std::chrono::steady_clock::time_point mark_;
};

inline constexpr double kTimeout = 4.0;  // run.dist_timeout_seconds in these tests
inline constexpr const char* kPort = "29500";

}  // namespace sift::testing

// Skips the test, saying why, where the network cannot be made.
#define SIFT_NETWORK_OR_SKIP(nodes)                               \
  do {                                                            \
    std::string why_not_;                                         \
    if (!make_network(nodes, why_not_)) GTEST_SKIP() << why_not_; \
  } while (0)
