// A private network of "machines" for multi-host tests: network namespaces joined by veth
// links to a bridge in a namespace of their own, each node with its own address
// (10.88.0.1, .2, ...), interface eth0 and host name (node0, node1, ...: a UTS namespace
// per process). Processes run in a node through `ip netns exec` and `unshare`; a node's
// link can be cut (its bridge port set down: packets are dropped, no reset is sent, as
// when a cable is pulled) and restored.
//
// Names carry the test process's pid ("smh<pid>x<n>"), so parallel test processes never
// collide; everything is removed by the destructor, and what a crashed test process left
// (its pid no longer runs) is removed when the next one makes a network. Making one needs
// root (CAP_NET_ADMIN, CAP_SYS_ADMIN); where it cannot be made, make() says why and the
// test skips with that reason.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace sift::testing {

class NetNodes {
 public:
  // `nodes` nodes, or nullptr with `why_not` set.
  static std::unique_ptr<NetNodes> make(int nodes, std::string& why_not);
  ~NetNodes();
  NetNodes(const NetNodes&) = delete;
  NetNodes& operator=(const NetNodes&) = delete;

  int size() const { return nodes_; }
  static constexpr const char* kInterface = "eth0";
  static std::string address(int node);  // 10.88.0.(node + 1)
  static std::string host(int node);     // node<node>
  std::string netns(int node) const;

  // argv that runs `shell` (a /bin/sh command line) on `node` under its host name; with
  // `mounts`, in a mount namespace of its own after each "SOURCE TARGET" bind mount (a
  // node's own disk at a path the others share).
  std::vector<std::string> on_node(int node, const std::string& shell,
                                   const std::vector<std::string>& mounts = {}) const;

  // The node's link down (cut) or up again.
  void cut(int node);
  void restore(int node);
  // Bytes the node's eth0 received so far.
  long long received_bytes(int node) const;

 private:
  NetNodes(std::string prefix, int nodes) : prefix_(std::move(prefix)), nodes_(nodes) {}
  std::string hub() const { return prefix_ + "h"; }
  std::string port(int node) const;  // the node's end on the bridge
  std::string prefix_;
  int nodes_;
};

// Deletes the namespaces and links of test processes that no longer run (a crashed test).
void remove_stale_networks();

}  // namespace sift::testing
