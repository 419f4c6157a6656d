#include "cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "framework/runtime/base/checkpoint_file.h"
#include "framework/runtime/base/run_folder.h"
#include "tests/test_files.h"

extern char** environ;

namespace sift::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::string kSift = SIFT_BINARY;
const std::string kSource = SIFT_SOURCE_DIR;

std::string env_words(const std::vector<std::string>& env) {
  std::string out;
  for (const auto& e : env) out += " " + quote(e);
  return out;
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Ended& e) {
  return os << "exit " << e.status << " after " << e.seconds << " s\n--- stdout:\n"
            << e.out << "--- stderr:\n"
            << e.err;
}

std::vector<std::string> error_lines(const std::string& err) {
  std::vector<std::string> out;
  for (const auto& line : lines_of(err)) {
    if (line.rfind("sift: error:", 0) == 0) out.push_back(line);
  }
  return out;
}

void Cluster::SetUp() {
  dir_ = make_temp_dir("sift_multihost");
  mark();
}

void Cluster::TearDown() {
  for (pid_t p : started_) {
    for (pid_t c : children(p)) ::kill(c, SIGKILL);
    ::kill(p, SIGKILL);
    ::waitpid(p, nullptr, WNOHANG);
  }
  net_.reset();  // kills what still runs in its namespaces
  fs::remove_all(dir_);
}

bool Cluster::make_network(int nodes, std::string& why_not) {
  net_ = NetNodes::make(nodes, why_not);
  return net_ != nullptr;
}

Proc Cluster::spawn(const std::vector<std::string>& argv) {
  Proc p;
  const std::string tag = std::to_string(count_++);
  p.out = dir_ + "/out" + tag;
  p.err = dir_ + "/err" + tag;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, p.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, p.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (posix_spawnp(&p.pid, args[0], &actions, nullptr, args.data(), environ) != 0) p.pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  if (p.pid > 0) started_.push_back(p.pid);
  mark();
  return p;
}

Proc Cluster::start_on_node(int node, const std::string& args,
                            const std::vector<std::string>& env) {
  return spawn(net_->on_node(node, "cd " + quote(kSource) + " && exec env" + env_words(env) + " " +
                                       quote(kSift) + " " + args));
}

Proc Cluster::start_rank(int node, int rank, int world, const std::string& args,
                         const std::vector<std::string>& extra,
                         const std::vector<std::string>& mounts) {
  std::vector<std::string> env{"RANK=" + std::to_string(rank),
                               "LOCAL_RANK=0",
                               "WORLD_SIZE=" + std::to_string(world),
                               "MASTER_ADDR=" + NetNodes::address(0),
                               std::string("MASTER_PORT=") + kPort,
                               std::string("GLOO_SOCKET_IFNAME=") + NetNodes::kInterface};
  env.insert(env.end(), extra.begin(), extra.end());
  return spawn(net_->on_node(
      node,
      "cd " + quote(kSource) + " && exec env" + env_words(env) + " " + quote(kSift) + " " + args,
      mounts));
}

Proc Cluster::start_here(const std::string& args, const std::vector<std::string>& env) {
  return spawn(
      {"/bin/sh", "-c",
       "cd " + quote(kSource) + " && exec env" + env_words(env) + " " + quote(kSift) + " " + args});
}

Ended Cluster::wait(const Proc& p, double seconds) {
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  Ended e;
  int status = 0;
  while (true) {
    const pid_t got = ::waitpid(p.pid, &status, WNOHANG);
    if (got == p.pid) break;
    if (got < 0) {
      status = -1;
      break;
    }
    if (Clock::now() > until) {
      for (pid_t c : children(p.pid)) ::kill(c, SIGKILL);
      ::kill(p.pid, SIGKILL);
      ::waitpid(p.pid, nullptr, 0);
      e.status = -2;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  e.seconds = std::chrono::duration<double>(Clock::now() - mark_).count();
  if (e.status != -2 && status != -1) {
    if (WIFEXITED(status)) e.status = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) e.status = 128 + WTERMSIG(status);
  }
  e.out = slurp(p.out);
  e.err = slurp(p.err);
  return e;
}

bool Cluster::wait_for(const std::string& path, double seconds) {
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (!fs::exists(path)) {
    if (Clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

std::vector<pid_t> Cluster::children(pid_t parent) {
  const std::string pid = std::to_string(parent);
  std::istringstream in(slurp("/proc/" + pid + "/task/" + pid + "/children"));
  std::vector<pid_t> out;
  for (pid_t c; in >> c;) out.push_back(c);
  return out;
}

std::string Cluster::train_args(const std::string& name, const std::string& extra) const {
  return "train " + kSource + "/configs/sms_spam.yaml --quiet --set run.dir=" + dir_ +
         " --set run.name=" + name +
         " --set model.buckets=100000 --set run.threads=1 --set data.workers=1"
         " --set run.dist_timeout_seconds=" +
         std::to_string(kTimeout) + extra;
}

int64_t Cluster::saved_step(const std::string& name) const {
  const std::string path = run_file(dir_ + "/" + name, kLastCheckpointFile);
  if (!fs::exists(path)) return -1;
  return read_checkpoint(path, {"model", "optimizer"}).meta.value("step", int64_t{-1});
}

}  // namespace sift::testing
