// `sift launch --nproc N -- train cfg.yaml`: N local processes of this program with
// torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT). Signals reach every child; when one fails the others are stopped and
// the launch fails naming that rank, so a dead rank never leaves the rest waiting.
// With --max-restarts N it is an agent instead: after a failure it starts every local rank
// again (SIFT_RESTART, restarts.h), which resume from the last complete last.ckpt, up to N
// times. With --nnodes M --node-rank R one agent runs on each machine: ranks R*N..R*N+N-1
// of M*N, and restart k rendezvouses on --master-port + k, so that the ranks of a restart
// never meet the store of a rank 0 still failing from the attempt before.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/provenance.h"
#include "tools/sift/commands.h"

namespace sift::cli {
namespace {

std::atomic<int> g_forward_signal{0};

void remember_signal(int sig) { g_forward_signal = sig; }

// A port the kernel says is free now (the rendezvous binds it a moment later).
int free_port(const std::string& addr) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = 0;
  if (::inet_pton(AF_INET, addr.c_str(), &a.sin_addr) != 1) a.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof(a);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (fd >= 0) ::close(fd);
    throw Error(
        fmt::format("sift launch: cannot find a free port on {}: {}", addr, std::strerror(errno)));
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string describe(int status) {
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
  }
  return fmt::format("exited with status {}", WEXITSTATUS(status));
}

bool failed(int status) { return !WIFEXITED(status) || WEXITSTATUS(status) != 0; }

// Exit status 2: the command or its config was refused (a usage error, or ranks that
// disagree on WORLD_SIZE or the config), which every restart would repeat.
bool refused(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 2; }

struct Launch {
  int nproc = 2;   // on this node
  int nnodes = 1;  // agents, one per machine
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
  double grace_seconds = 10.0;
  int max_restarts = 0;
  std::vector<std::string> command;
};

// One start of the local ranks: the restart's number, why, when, and its port.
struct Attempt {
  int number = 0;
  std::string reason;
  std::string failed_at;
  int port = 0;
};

pid_t start_rank(const Launch& l, int local, const Attempt& a) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  const int rank = l.node_rank * l.nproc + local;
  setenv("RANK", std::to_string(rank).c_str(), 1);
  setenv("LOCAL_RANK", std::to_string(local).c_str(), 1);
  setenv("GROUP_RANK", std::to_string(l.node_rank).c_str(), 1);
  setenv("WORLD_SIZE", std::to_string(l.nnodes * l.nproc).c_str(), 1);
  setenv("LOCAL_WORLD_SIZE", std::to_string(l.nproc).c_str(), 1);
  setenv("MASTER_ADDR", l.master_addr.c_str(), 1);
  setenv("MASTER_PORT", std::to_string(a.port).c_str(), 1);
  if (l.max_restarts > 0) {
    setenv("SIFT_RESTART", std::to_string(a.number).c_str(), 1);
    setenv("SIFT_MAX_RESTARTS", std::to_string(l.max_restarts).c_str(), 1);
    setenv("SIFT_RESTART_REASON", a.reason.c_str(), 1);
    setenv("SIFT_RESTART_TIME", a.failed_at.c_str(), 1);
  }
  std::vector<char*> argv{const_cast<char*>("sift")};
  for (const auto& arg : l.command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  ::execv("/proc/self/exe", argv.data());
  std::fprintf(stderr, "sift: error: launch: cannot start rank %d: %s\n", rank,
               std::strerror(errno));
  ::_exit(127);
}

void signal_all(const std::vector<pid_t>& pids, int sig) {
  for (pid_t p : pids) {
    if (p > 0) ::kill(p, sig);
  }
}

// How the local ranks of one start ended: the first that failed (-1: none) and how.
struct Outcome {
  int failed_rank = -1;
  int status = 0;
};

// Waits for every child. The first failure stops the others (SIGTERM, then SIGKILL after
// the grace period); the launch's own signals are passed on, and end the launch.
Outcome supervise(const Launch& l, std::vector<pid_t> pids) {
  using Clock = std::chrono::steady_clock;
  int first_rank = -1, first_status = 0, received = 0;
  Clock::time_point kill_at = Clock::time_point::max();
  size_t alive = pids.size();
  while (alive > 0) {
    if (const int sig = g_forward_signal.exchange(0); sig != 0) {
      received = sig;
      signal_all(pids, sig);
      kill_at =
          std::min(kill_at, Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                               std::chrono::duration<double>(l.grace_seconds)));
    }
    if (Clock::now() >= kill_at) signal_all(pids, SIGKILL);
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    for (size_t r = 0; r < pids.size(); ++r) {
      if (pids[r] != pid) continue;
      pids[r] = -1;
      --alive;
      if (failed(status) && first_rank < 0 && received == 0) {
        first_rank = l.node_rank * l.nproc + static_cast<int>(r);
        first_status = status;
        signal_all(pids, SIGTERM);
        kill_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(l.grace_seconds));
      }
    }
  }
  if (received != 0) {
    throw Error(fmt::format("launch: stopped by signal {} ({}); passed on to every rank", received,
                            strsignal(received)));
  }
  return {first_rank, first_status};
}

// Starts the local ranks of `a` and waits for them.
Outcome start_and_supervise(const Launch& l, const Attempt& a) {
  std::fflush(nullptr);  // the children must not repeat buffered output
  std::vector<pid_t> pids;
  for (int r = 0; r < l.nproc; ++r) {
    const pid_t pid = start_rank(l, r, a);
    if (pid < 0) {
      signal_all(pids, SIGTERM);
      throw Error(fmt::format("launch: cannot start local rank {}: {}", r, std::strerror(errno)));
    }
    pids.push_back(pid);
  }
  return supervise(l, std::move(pids));
}

void check_nodes(const Launch& l) {
  if (l.node_rank >= l.nnodes) {
    throw Error(
        fmt::format("launch: --node-rank {} is not below --nnodes {}", l.node_rank, l.nnodes));
  }
  if (l.nnodes > 1 && (l.master_addr == "127.0.0.1" || l.master_port == 0)) {
    throw Error(
        "launch: --nnodes > 1 needs --master-addr (node 0's address, which every node "
        "reaches) and --master-port (restart k uses that port + k on node 0)");
  }
}

void run_launch(Launch l) {
  if (!l.command.empty() && l.command.front() == "--") l.command.erase(l.command.begin());
  if (l.command.empty())
    throw Error("launch: give the command to run, e.g. `sift launch --nproc 2 -- train cfg.yaml`");
  check_nodes(l);
  struct sigaction sa {};
  sa.sa_handler = remember_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  Attempt a;
  for (;; ++a.number) {
    a.port = l.master_port > 0 ? l.master_port + a.number : free_port(l.master_addr);
    const Outcome o = start_and_supervise(l, a);
    if (o.failed_rank < 0) return;
    a.reason = fmt::format("rank {} {}", o.failed_rank, describe(o.status));
    a.failed_at = utc_iso8601(std::time(nullptr));
    if (l.max_restarts == 0) {
      throw Error(fmt::format("launch: {}; stopped the other {} rank(s) of this node", a.reason,
                              l.nproc - 1));
    }
    if (refused(o.status)) {
      throw Error(fmt::format(
          "launch: {}: its command or config was refused (see its error above), which a "
          "restart would repeat; not restarted (--max-restarts {})",
          a.reason, l.max_restarts));
    }
    if (a.number == l.max_restarts) {
      throw Error(
          fmt::format("launch: {} again: gave up after {} restart(s) (--max-restarts {}); "
                      "the run folder's restarts.jsonl lists each restart and the step it "
                      "resumed from",
                      a.reason, a.number, l.max_restarts));
    }
    std::fprintf(stderr,
                 "sift: launch: %s; restart %d of at most %d: every rank resumes from the last "
                 "complete last.ckpt\n",
                 a.reason.c_str(), a.number + 1, l.max_restarts);
  }
}

}  // namespace

void add_launch_command(CLI::App& app) {
  auto l = std::make_shared<Launch>();
  auto* cmd = app.add_subcommand(
      "launch", "Run a sift command in N local processes that train together (data-parallel).");
  cmd->add_option("--nproc", l->nproc, "Processes to start (on this node)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--nnodes", l->nnodes,
                  "Machines taking part, each running its own `sift launch` (an agent)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--node-rank", l->node_rank,
                  "This machine's number, 0 to --nnodes - 1 (node 0 runs rank 0)")
      ->check(CLI::Range(0, 4095))
      ->capture_default_str();
  cmd->add_option("--max-restarts", l->max_restarts,
                  "After a rank fails, stop the others and start every rank again, resuming "
                  "from the last complete last.ckpt, at most this many times (needs run.name)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--master-addr", l->master_addr, "Address rank 0 serves the rendezvous on")
      ->capture_default_str();
  cmd->add_option("--master-port", l->master_port,
                  "Rendezvous port (restart k: this + k); 0: a free one (one node only)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--grace-seconds", l->grace_seconds,
                  "After a rank fails, how long the others get to stop before SIGKILL")
      ->capture_default_str();
  cmd->add_option("command", l->command, "The sift command each rank runs, after --")->required();
  cmd->callback([l] { run_launch(*l); });
}

}  // namespace sift::cli
