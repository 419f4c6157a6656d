// Distributed training as a user runs it: `sift launch`, and ranks started by hand with
// torchrun's environment, on the loopback interface with ports chosen free at test time.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../free_port.h"
#include "tests/test_files.h"

extern char** environ;

namespace sift {
namespace distributed_cli_test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::string kSift = SIFT_BINARY;
const std::string kSource = SIFT_SOURCE_DIR;
const std::string kSmsData = kSource + "/data/sms_spam/SMSSpamCollection";
const std::string kSmsConfig = kSource + "/configs/sms_spam.yaml";

std::string read_file(const std::string& path) { return testing::slurp(path); }

using testing::free_port;

struct Process {
  pid_t pid = -1;
  std::string out, err;  // files
};

struct Result {
  int status = -1;  // exit status; 128 + signal when killed
  std::string out, err;
  double seconds = 0;
};

std::ostream& operator<<(std::ostream& os, const Result& r) {
  return os << "exit " << r.status << " after " << r.seconds << " s\n--- stdout:\n"
            << r.out << "--- stderr:\n"
            << r.err;
}

class Dist : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = sift::testing::make_temp_dir("sift_dist_cli"); }
  void TearDown() override { fs::remove_all(dir_); }

  // Starts `sift ARGS` with extra environment variables, output to files.
  Process start(const std::string& args, const std::vector<std::string>& env = {}) {
    Process p;
    const std::string tag = std::to_string(count_++);
    p.out = dir_ + "/out" + tag;
    p.err = dir_ + "/err" + tag;
    std::string command = "cd '" + kSource + "' && exec env";
    for (const auto& e : env) command += " " + e;
    command += " '" + kSift + "' " + args + " >" + p.out + " 2>" + p.err;
    const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
    posix_spawn(&p.pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ);
    started_ = Clock::now();
    return p;
  }

  Result wait(const Process& p) {
    int status = 0;
    ::waitpid(p.pid, &status, 0);
    Result r;
    r.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
    if (WIFEXITED(status)) r.status = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.status = 128 + WTERMSIG(status);
    r.out = read_file(p.out);
    r.err = read_file(p.err);
    return r;
  }

  Result run(const std::string& args, const std::vector<std::string>& env = {}) {
    return wait(start(args, env));
  }

  // Waits until `path` exists (a rank got past the rendezvous), at most `seconds`.
  static bool wait_for(const std::string& path, double seconds) {
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    while (!fs::exists(path)) {
      if (Clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }

  // SMS spam in two gzip shards of 4000 and 1574 lines: gzip cannot be split, so rank 0
  // reads about 2.5x as many records as rank 1 (uneven inputs).
  std::string uneven_shards() {
    const std::string text = read_file(kSmsData);
    size_t cut = 0;
    for (int i = 0; i < 4000; ++i) cut = text.find('\n', cut) + 1;
    std::ofstream(dir_ + "/a.tsv") << text.substr(0, cut);
    std::ofstream(dir_ + "/b.tsv") << text.substr(cut);
    std::system(("gzip -f '" + dir_ + "/a.tsv' '" + dir_ + "/b.tsv'").c_str());
    return dir_ + "/*.tsv.gz";
  }

  std::string train_args(const std::string& name, const std::string& extra = "") const {
    return "train " + kSmsConfig + " --quiet --set run.dir=" + dir_ + " --set run.name=" + name +
           " --set model.buckets=100000 --set run.threads=1 --set data.workers=1" + extra;
  }

  std::string dir_;
  int count_ = 0;
  Clock::time_point started_;
};

bool has_trace(const std::string& err) {
  for (const char* trace : {"terminate called", "Exception raised from", "frame #"}) {
    if (err.find(trace) != std::string::npos) return true;
  }
  return false;
}

// Two ranks on uneven shards: no hang, every example counted once per epoch, one report
// (rank 0's), with the validation figures of both ranks' parts together.
TEST_F(Dist, LaunchTwoRanksOnUnevenShardsTrainsOnEveryExample) {
  const std::string data = uneven_shards();
  const Result r =
      run("launch --nproc 2 -- " +
          train_args("two", " --json --set train.epochs=2 --set data.train.path='" + data + "'"));
  ASSERT_EQ(r.status, 0) << r;
  const auto summary = nlohmann::json::parse(r.out);  // exactly one JSON document
  const auto& t = summary["train"];
  EXPECT_EQ(t["world_size"], 2);
  // The training part (90%, by hash) twice: both ranks' examples, none dropped.
  EXPECT_EQ(t["examples"].get<int64_t>(), 2 * t["records"].get<int64_t>());
  EXPECT_GT(summary["splits"]["valid"]["accuracy"].get<double>(), 0.95);
  // The hashed 10% over both ranks' shards: SMS spam has 5574 lines in all.
  EXPECT_EQ(summary["splits"]["valid"]["examples"].get<int64_t>() + t["records"].get<int64_t>(),
            5574);
  EXPECT_TRUE(fs::exists(dir_ + "/two/report.json"));
  EXPECT_TRUE(fs::exists(dir_ + "/two/last.ckpt"));
}

// Interrupted by a step limit and resumed with 2 ranks again: the same final model as an
// uninterrupted run (same validation loss to the last digit); with 1 process: refused.
TEST_F(Dist, ResumeWorksWithTheSameWorldSizeAndIsRefusedWithAnother) {
  const std::string common = " --set train.epochs=1 --set train.scheduler.type=constant";
  ASSERT_EQ(run("launch --nproc 2 -- " + train_args("whole", common)).status, 0);
  const Result part =
      run("launch --nproc 2 -- " + train_args("parts", common + " --set train.max_steps=40"));
  ASSERT_EQ(part.status, 0) << part;
  const Result single = run("train --resume " + dir_ + "/parts --quiet");
  EXPECT_NE(single.status, 0);
  EXPECT_FALSE(has_trace(single.err)) << single;
  EXPECT_NE(single.err.find("sift: error: " + dir_ +
                            "/parts/last.ckpt was written by a run of 2 "
                            "process(es) and this one has 1"),
            std::string::npos)
      << single;
  const Result resumed =
      run("launch --nproc 2 -- train --resume " + dir_ + "/parts --quiet --set train.max_steps=0");
  ASSERT_EQ(resumed.status, 0) << resumed;
  const auto whole = nlohmann::json::parse(read_file(dir_ + "/whole/report.json"));
  const auto parts = nlohmann::json::parse(read_file(dir_ + "/parts/report.json"));
  EXPECT_EQ(parts["train"]["steps"], whole["train"]["steps"]);
  EXPECT_EQ(parts["splits"]["valid"]["loss"].get<double>(),
            whole["splits"]["valid"]["loss"].get<double>());
}

// A rank killed mid-training: the other stops with one clear error within the timeout.
TEST_F(Dist, KilledRankEndsTheOtherWithAnErrorWithinTheTimeout) {
  const std::string port = "MASTER_PORT=" + std::to_string(free_port());
  const std::string args =
      train_args("killed", " --set train.epochs=200 --set run.dist_timeout_seconds=5");
  Process rank0 = start(args, {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", port});
  Process rank1 = start(args, {"RANK=1", "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", port});
  ASSERT_TRUE(wait_for(dir_ + "/killed/vocab.txt", 30)) << "the ranks never started training";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ::kill(rank1.pid, SIGKILL);
  started_ = Clock::now();
  const Result r = wait(rank0);
  wait(rank1);
  EXPECT_NE(r.status, 0) << r;
  EXPECT_LT(r.status, 128) << r;
  EXPECT_LT(r.seconds, 5.0 + 5.0) << r;  // the timeout, and slack for a loaded machine
  EXPECT_FALSE(has_trace(r.err)) << r;
  EXPECT_NE(r.err.find("sift: error: distributed"), std::string::npos) << r;
  // The node each rank is on: its host name (and rank 0's MASTER_ADDR).
  EXPECT_NE(r.err.find("failed on rank 0 at "), std::string::npos) << r;
  EXPECT_NE(r.err.find(" (127.0.0.1) of 2, waiting for rank 1 at "), std::string::npos) << r;
}

// `sift launch` sees a child die, stops the others and names the rank.
TEST_F(Dist, LaunchStopsTheOtherRanksWhenOneDiesAndNamesIt) {
  const Process launch = start("launch --nproc 2 --grace-seconds 5 -- " +
                               train_args("launched", " --set train.epochs=200"));
  ASSERT_TRUE(wait_for(dir_ + "/launched/vocab.txt", 30)) << "the ranks never started training";
  const std::string pid = std::to_string(launch.pid);
  std::istringstream children(read_file("/proc/" + pid + "/task/" + pid + "/children"));
  std::vector<pid_t> pids;
  for (pid_t p; children >> p;) pids.push_back(p);
  ASSERT_EQ(pids.size(), 2u);
  ::kill(pids[1], SIGKILL);
  started_ = Clock::now();
  const Result r = wait(launch);
  EXPECT_NE(r.status, 0) << r;
  EXPECT_LT(r.seconds, 15.0) << r;
  EXPECT_NE(r.err.find("sift: error: launch: rank 1 was killed by signal 9"), std::string::npos)
      << r;
  for (pid_t p : pids) EXPECT_NE(::kill(p, 0), 0) << "rank process " << p << " still runs";
}

TEST_F(Dist, PortInUseIsAClearError) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof(a);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ::listen(fd, 1);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string port = "MASTER_PORT=" + std::to_string(ntohs(a.sin_port));
  const Result r = run(train_args("busy"), {"RANK=0", "WORLD_SIZE=2", port});
  ::close(fd);
  EXPECT_NE(r.status, 0) << r;
  EXPECT_FALSE(has_trace(r.err)) << r;
  EXPECT_NE(r.err.find("sift: error: rank 0 at "), std::string::npos) << r;
  EXPECT_NE(r.err.find("(127.0.0.1) cannot serve the rendezvous at 127.0.0.1:"), std::string::npos)
      << r;
  EXPECT_NE(r.err.find("is the port in use?"), std::string::npos) << r;
}

TEST_F(Dist, UnreachableMasterIsAClearErrorWithinTheTimeout) {
  const std::string port = "MASTER_PORT=" + std::to_string(free_port());  // nobody listens
  const Result r = run(train_args("alone", " --set run.dist_timeout_seconds=2"),
                       {"RANK=1", "WORLD_SIZE=2", port});
  EXPECT_NE(r.status, 0) << r;
  EXPECT_LT(r.seconds, 2.0 + 8.0) << r;
  EXPECT_FALSE(has_trace(r.err)) << r;
  EXPECT_NE(r.err.find("sift: error: rank 1 at "), std::string::npos) << r;
  EXPECT_NE(r.err.find(" cannot reach the master at 127.0.0.1:"), std::string::npos) << r;
}

}  // namespace distributed_cli_test
}  // namespace sift
