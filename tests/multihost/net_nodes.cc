#include "net_nodes.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace sift::testing {
namespace {

constexpr const char* kPrefix = "smh";

// Runs a shell command; its output (with stderr) into `out`. Returns the exit status.
int shell(const std::string& command, std::string* out = nullptr) {
  std::string text;
  if (FILE* p = ::popen((command + " 2>&1").c_str(), "r")) {
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) text.append(buf, n);
    const int status = ::pclose(p);
    if (out) *out = text;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  }
  if (out) *out = "popen failed";
  return 127;
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Ends every process in a namespace (only this test's: the namespace is its own).
void kill_all_in(const std::string& ns) {
  std::string pids;
  shell("ip netns pids " + ns, &pids);
  for (const auto& p : words(pids)) ::kill(static_cast<pid_t>(std::atoll(p.c_str())), SIGKILL);
}

void delete_netns(const std::string& ns) {
  kill_all_in(ns);
  shell("ip netns delete " + ns);
}

// The pid a name made by this harness carries ("smh<pid>x..."), or 0.
pid_t owner_of(const std::string& name) {
  if (name.rfind(kPrefix, 0) != 0) return 0;
  const size_t x = name.find('x', 3);
  if (x == std::string::npos) return 0;
  return static_cast<pid_t>(std::atoll(name.substr(3, x - 3).c_str()));
}

bool runs(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace

void remove_stale_networks() {
  std::string list;
  if (shell("ip netns list", &list) != 0) return;
  for (const auto& w : words(list)) {
    const pid_t owner = owner_of(w);
    if (owner != 0 && !runs(owner)) delete_netns(w);
  }
  std::string links;
  shell("ip -o link show", &links);
  std::istringstream in(links);
  for (std::string line; std::getline(in, line);) {
    const auto parts = words(line);
    if (parts.size() < 2) continue;
    std::string name = parts[1].substr(0, parts[1].find_first_of(":@"));
    const pid_t owner = owner_of(name);
    if (owner != 0 && !runs(owner)) shell("ip link delete " + name);
  }
}

std::unique_ptr<NetNodes> NetNodes::make(int nodes, std::string& why_not) {
  if (::geteuid() != 0) {
    why_not = "making network namespaces needs root (CAP_NET_ADMIN); this test runs as uid " +
              std::to_string(::geteuid());
    return nullptr;
  }
  remove_stale_networks();
  static int made = 0;
  const std::string prefix =
      std::string(kPrefix) + std::to_string(::getpid()) + "x" + std::to_string(made++);
  std::unique_ptr<NetNodes> net(new NetNodes(prefix, 0));
  std::string out;
  auto step = [&](const std::string& command) {
    if (shell(command, &out) == 0) return true;
    why_not = "cannot make the test network: `" + command + "` failed: " + out;
    return false;
  };
  if (!step("ip netns add " + net->hub()) ||
      !step("ip -n " + net->hub() + " link add br0 type bridge") ||
      !step("ip -n " + net->hub() + " link set br0 up")) {
    return nullptr;  // the destructor removes what was made
  }
  for (int i = 0; i < nodes; ++i) {
    const std::string ns = net->netns(i), veth = prefix + "v" + std::to_string(i);
    if (!step("ip netns add " + ns)) return nullptr;
    net->nodes_ = i + 1;
    if (!step("ip link add " + veth + " type veth peer name " + net->port(i)) ||
        !step("ip link set " + veth + " netns " + ns) ||
        !step("ip link set " + net->port(i) + " netns " + net->hub()) ||
        !step("ip -n " + net->hub() + " link set " + net->port(i) + " master br0 up") ||
        !step("ip -n " + ns + " link set " + veth + " name " + kInterface) ||
        !step("ip -n " + ns + " addr add " + address(i) + "/24 dev " + kInterface) ||
        !step("ip -n " + ns + " link set " + kInterface + " up") ||
        !step("ip -n " + ns + " link set lo up")) {
      return nullptr;
    }
  }
  if (!step("ip netns exec " + net->netns(0) + " unshare --uts --mount true")) return nullptr;
  return net;
}

NetNodes::~NetNodes() {
  for (int i = 0; i < nodes_; ++i) {
    delete_netns(netns(i));
    shell("ip link delete " + prefix_ + "v" + std::to_string(i));  // if it was never moved
  }
  delete_netns(hub());
}

std::string NetNodes::address(int node) { return "10.88.0." + std::to_string(node + 1); }
std::string NetNodes::host(int node) { return "node" + std::to_string(node); }
std::string NetNodes::netns(int node) const { return prefix_ + "n" + std::to_string(node); }
std::string NetNodes::port(int node) const { return prefix_ + "p" + std::to_string(node); }

std::vector<std::string> NetNodes::on_node(int node, const std::string& command,
                                           const std::vector<std::string>& mounts) const {
  std::string script;
  for (const auto& m : mounts) script += "mount --bind " + m + " && ";
  script += "hostname " + host(node) + " && " + command;
  std::vector<std::string> argv{"ip", "netns", "exec", netns(node), "unshare", "--uts"};
  if (!mounts.empty()) argv.push_back("--mount");
  for (const char* a : {"/bin/sh", "-c"}) argv.push_back(a);
  argv.push_back(script);
  return argv;
}

void NetNodes::cut(int node) { shell("ip -n " + hub() + " link set " + port(node) + " down"); }
void NetNodes::restore(int node) { shell("ip -n " + hub() + " link set " + port(node) + " up"); }

long long NetNodes::received_bytes(int node) const {
  std::string out;
  shell(
      "ip netns exec " + netns(node) + " cat /sys/class/net/" + kInterface + "/statistics/rx_bytes",
      &out);
  return std::atoll(out.c_str());
}

}  // namespace sift::testing
