// Faults over a real network link: two "machines" (network namespaces joined by veth
// links, each with its own address and host name) train one SMS spam run with torchrun's
// variables, and a process is killed, a link cut, a node never comes or comes with another
// config. Every surviving rank must end within run.dist_timeout_seconds (4 s here) with
// one `sift: error:` line naming itself, its node and what it waited for, and the last
// last.ckpt must still resume.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "cluster.h"
#include "tests/test_files.h"

namespace sift::testing {
namespace faults_test {

namespace fs = std::filesystem;

// Slack over the timeout for starting, the store's own polling and a loaded machine.
constexpr double kSlack = 6.0;

class Faults : public Cluster {
 protected:
  // Both ranks of run `name` training (vocab.txt written, then `settle` seconds).
  std::pair<Proc, Proc> start_pair(const std::string& name, const std::string& extra) {
    const std::string args = train_args(name, extra);
    Proc r0 = start_rank(0, 0, 2, args);
    Proc r1 = start_rank(1, 1, 2, args);
    return {r0, r1};
  }

  // A resume over loopback of run `name`, two more steps from its last.ckpt: it must run.
  void expect_resumes(const std::string& name) {
    const int64_t step = saved_step(name);
    ASSERT_GE(step, 0) << "no last.ckpt in " << name;
    const Ended r =
        wait(start_here("launch --nproc 2 -- train --resume " + dir_ + "/" + name +
                        " --quiet --json --set train.max_steps=" + std::to_string(step + 2)),
             120);
    ASSERT_EQ(r.status, 0) << r;
    EXPECT_EQ(nlohmann::json::parse(r.out)["train"]["steps"].get<int64_t>(), step + 2) << r;
  }

  // One error line, which names `who` (rank, host, address) and contains `what`.
  static void expect_one_error(const Ended& e, const std::string& who, const std::string& what) {
    const auto lines = error_lines(e.err);
    ASSERT_EQ(lines.size(), 1u) << e;
    EXPECT_CONTAINS(lines[0], who);
    EXPECT_CONTAINS(lines[0], what);
    EXPECT_EQ(e.err.find("frame #"), std::string::npos) << e;
  }
};

const std::string kRank0 = "rank 0 at node0 (10.88.0.1)";
const std::string kRank1 = "rank 1 at node1 (10.88.0.2)";

// node1 with run.threads 2: a node's own settings may differ from rank 0's.
TEST_F(Faults, TwoNodesTrainOneRunOverTheirLink) {
  SIFT_NETWORK_OR_SKIP(2);
  const std::string args = train_args("pair", " --json --set train.epochs=2");
  const Proc r0 = start_rank(0, 0, 2, args);
  const Proc r1 = start_rank(1, 1, 2, args + " --set run.threads=2");
  const Ended e0 = wait(r0, 120), e1 = wait(r1, 120);
  ASSERT_EQ(e0.status, 0) << e0;
  ASSERT_EQ(e1.status, 0) << e1;
  const auto summary = nlohmann::json::parse(e0.out);
  EXPECT_EQ(summary["train"]["world_size"], 2);
  EXPECT_GT(summary["splits"]["valid"]["accuracy"].get<double>(), 0.95);
  // The gradients went over the veth link: megabytes, not a rendezvous's few packets.
  EXPECT_GT(net_->received_bytes(1), 1'000'000) << "node1 received little over its link";
}

TEST_F(Faults, KillingOneNodesProcessEndsTheOtherWithinTheTimeout) {
  SIFT_NETWORK_OR_SKIP(2);
  auto [r0, r1] = start_pair("killed", " --set train.epochs=200");
  ASSERT_TRUE(wait_for(dir_ + "/killed/vocab.txt", 60)) << "the ranks never started training";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ::kill(r1.pid, SIGKILL);
  mark();
  const Ended e0 = wait(r0, kTimeout + kSlack + 10);
  EXPECT_EQ(e0.status, 1) << e0;
  EXPECT_LT(e0.seconds, kTimeout + kSlack) << e0;
  expect_one_error(e0, "failed on " + kRank0 + " of 2, waiting for " + kRank1, "distributed");
}

TEST_F(Faults, CuttingTheLinkMidEpochEndsBothRanksWithinTheTimeoutAndLastCkptResumes) {
  SIFT_NETWORK_OR_SKIP(2);
  auto [r0, r1] = start_pair("cut", " --set train.epochs=200 --set train.checkpoint_minutes=0.005");
  ASSERT_TRUE(wait_for(dir_ + "/cut/last.ckpt", 60)) << "no checkpoint was saved";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  net_->cut(1);
  mark();
  const Ended e0 = wait(r0, kTimeout + kSlack + 10), e1 = wait(r1, kTimeout + kSlack + 10);
  for (const Ended* e : {&e0, &e1}) {
    EXPECT_EQ(e->status, 1) << *e;
    EXPECT_LT(e->seconds, kTimeout + kSlack) << *e;
  }
  expect_one_error(e0, "failed on " + kRank0 + " of 2, waiting for " + kRank1, "distributed");
  expect_one_error(e1, "failed on " + kRank1 + " of 2, waiting for " + kRank0, "distributed");
  expect_resumes("cut");
}

// Saves after every step of an 80 MB table (buckets 2M), so that most of the run is a
// save (each rank's state gathered, then rank 0 writes): the cut falls into one, or
// between two, and the last.ckpt left must be whole.
TEST_F(Faults, CuttingTheLinkDuringCheckpointSavesLeavesALastCkptThatResumes) {
  SIFT_NETWORK_OR_SKIP(2);
  auto [r0, r1] = start_pair("saving",
                             " --set train.epochs=200 --set model.buckets=2000000"
                             " --set train.checkpoint_minutes=0");
  ASSERT_TRUE(wait_for(dir_ + "/saving/last.ckpt", 60)) << "no checkpoint was saved";
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  net_->cut(1);
  mark();
  const Ended e0 = wait(r0, kTimeout + kSlack + 20), e1 = wait(r1, kTimeout + kSlack + 20);
  for (const Ended* e : {&e0, &e1}) {
    EXPECT_EQ(e->status, 1) << *e;
    EXPECT_EQ(error_lines(e->err).size(), 1u) << *e;
  }
  for (const auto& f : fs::directory_iterator(dir_ + "/saving")) {
    EXPECT_EQ(f.path().filename().string().find(".tmp"), std::string::npos)
        << "a temporary file was left: " << f.path();
  }
  expect_resumes("saving");
}

TEST_F(Faults, ANodeThatNeverArrivesIsNamedWithinTheTimeout) {
  SIFT_NETWORK_OR_SKIP(2);
  const Proc r0 = start_rank(0, 0, 2, train_args("alone"));
  const Ended e0 = wait(r0, kTimeout + kSlack + 10);
  EXPECT_EQ(e0.status, 1) << e0;
  EXPECT_LT(e0.seconds, kTimeout + kSlack) << e0;
  expect_one_error(e0, "rendezvous at 10.88.0.1:29500 failed on " + kRank0,
                   "rank 1 did not arrive within run.dist_timeout_seconds = 4 s");
}

TEST_F(Faults, ANodeWithAnotherConfigIsRefusedAtTheRendezvousByBoth) {
  SIFT_NETWORK_OR_SKIP(2);
  const Proc r0 = start_rank(0, 0, 2, train_args("configs"));
  const Proc r1 = start_rank(1, 1, 2, train_args("configs", " --set model.dim=20"));
  const Ended e0 = wait(r0, kTimeout + kSlack), e1 = wait(r1, kTimeout + kSlack);
  expect_one_error(e0, kRank1 + " trains another config than " + kRank0,
                   "model.dim is 20 there and 10 here");
  expect_one_error(e1, kRank0 + " trains another config than " + kRank1,
                   "model.dim is 10 there and 20 here");
  EXPECT_LT(e0.seconds, kTimeout) << "refused at once, not after the timeout: " << e0;
  // A usage error's status: an agent does not restart what would be refused again.
  EXPECT_EQ(e0.status, 2) << e0;
  EXPECT_EQ(e1.status, 2) << e1;
}

TEST_F(Faults, ANodeWithAnotherWorldSizeIsRefusedAtTheRendezvousByBoth) {
  SIFT_NETWORK_OR_SKIP(2);
  const Proc r0 = start_rank(0, 0, 2, train_args("worlds"));
  const Proc r1 = start_rank(1, 1, 3, train_args("worlds"));
  const Ended e0 = wait(r0, kTimeout + kSlack), e1 = wait(r1, kTimeout + kSlack);
  expect_one_error(e0,
                   kRank1 + " was started with WORLD_SIZE=3 and " + kRank0 + " with WORLD_SIZE=2",
                   "start every rank with the same WORLD_SIZE");
  expect_one_error(e1,
                   kRank0 + " was started with WORLD_SIZE=2 and " + kRank1 + " with WORLD_SIZE=3",
                   "start every rank with the same WORLD_SIZE");
  EXPECT_LT(e0.seconds, kTimeout) << e0;
  EXPECT_EQ(e0.status, 2) << e0;
}

// node1's own disk at the run folder's path (a bind mount in its mount namespace): an
// empty folder where node0 writes the run.
TEST_F(Faults, ANodeThatDoesNotSeeTheRunFolderIsRefusedNamingIt) {
  SIFT_NETWORK_OR_SKIP(2);
  const std::string own = dir_ + "/node1-disk";
  fs::create_directories(own);
  fs::create_directories(dir_ + "/unshared");
  const std::string args = train_args("run", " --set run.dir=" + dir_ + "/unshared");
  const Proc r0 = start_rank(0, 0, 2, args);
  const Proc r1 = start_rank(1, 1, 2, args, {}, {own + " " + dir_ + "/unshared"});
  const Ended e0 = wait(r0, kTimeout + kSlack + 20), e1 = wait(r1, kTimeout + kSlack + 20);
  EXPECT_EQ(e0.status, 1) << e0;
  EXPECT_EQ(e1.status, 1) << e1;
  for (const Ended* e : {&e0, &e1}) {
    expect_one_error(*e, kRank1 + " does not see the run folder " + dir_ + "/unshared/run",
                     "must be on a file system every node shares");
  }
}

// A resume where node1 sees, at the run folder's path, a copy made 10 steps earlier.
TEST_F(Faults, ANodeThatSeesAStaleCopyOfTheRunFolderIsRefusedOnResumeNamingIt) {
  SIFT_NETWORK_OR_SKIP(2);
  const std::string run = dir_ + "/stale";
  const std::string copy = dir_ + "/node1-disk";
  ASSERT_EQ(
      wait(start_here("launch --nproc 2 -- " + train_args("stale", " --set train.max_steps=10")),
           120)
          .status,
      0);
  fs::copy(run, copy, fs::copy_options::recursive);
  ASSERT_EQ(wait(start_here("launch --nproc 2 -- train --resume " + run +
                            " --quiet --set train.max_steps=20"),
                 120)
                .status,
            0);
  const std::string args = "train --resume " + run + " --quiet --set train.max_steps=30";
  const Proc r0 = start_rank(0, 0, 2, args);
  const Proc r1 = start_rank(1, 1, 2, args, {}, {copy + " " + run});
  const Ended e0 = wait(r0, kTimeout + kSlack + 20), e1 = wait(r1, kTimeout + kSlack + 20);
  for (const Ended* e : {&e0, &e1}) {
    EXPECT_EQ(e->status, 1) << *e;
    expect_one_error(*e,
                     kRank1 + " sees another or a stale copy of the run folder " + run +
                         ": its last.ckpt differs from the one " + kRank0 + " sees",
                     "not a copy per node");
  }
  EXPECT_EQ(saved_step("stale"), 20) << "the refused resume changed the run";
}

}  // namespace faults_test
}  // namespace sift::testing
