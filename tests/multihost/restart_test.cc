// `sift launch --max-restarts`: after a rank is killed every rank starts again and resumes
// from the last complete last.ckpt, to the weights of an uninterrupted run bit for bit; on
// one host, and with one agent per node on two nodes of a NetNodes network. Ranks that
// fail at the same step every time stop after N restarts, saying so.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "cluster.h"
#include "framework/runtime/base/checkpoint_file.h"
#include "tests/test_files.h"

namespace sift::testing {
namespace restart_test {

namespace fs = std::filesystem;

// Saves every 0.12 s, so that a kill loses at most a few steps; a constant learning rate.
const std::string kCommon =
    " --set train.epochs=4 --set train.checkpoint_minutes=0.002 --set "
    "train.scheduler.type=constant";

class Restarts : public Cluster {
 protected:
  std::string model_bytes(const std::string& name) const {
    return read_checkpoint(dir_ + "/" + name + "/last.ckpt").blobs.at("model");
  }
  nlohmann::json report(const std::string& name) const {
    return nlohmann::json::parse(slurp(dir_ + "/" + name + "/report.json"));
  }
  // Kills rank `rank` (a child of `launch`) once `name` has a last.ckpt.
  void kill_rank_after_first_save(const Proc& launch, const std::string& name, size_t rank) {
    ASSERT_TRUE(wait_for(dir_ + "/" + name + "/last.ckpt", 60)) << "no checkpoint was saved";
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto ranks = children(launch.pid);
    ASSERT_GT(ranks.size(), rank);
    ::kill(ranks[rank], SIGKILL);
  }
  // The restart that report.json and train.log of `name` record.
  void expect_one_restart(const std::string& name, const std::string& reason) {
    const auto r = report(name);
    ASSERT_EQ(r["train"]["restarts"].size(), 1u) << r["train"].dump(2);
    const auto& restart = r["train"]["restarts"][0];
    EXPECT_EQ(restart["restart"], 1);
    EXPECT_EQ(restart["reason"], reason);
    EXPECT_FALSE(restart["failed_at"].get<std::string>().empty());
    const int64_t from = restart["resumed_from_step"].get<int64_t>();
    EXPECT_GT(from, 0);
    EXPECT_LT(from, r["train"]["steps"].get<int64_t>());
    EXPECT_CONTAINS(slurp(dir_ + "/" + name + "/train.log"),
                    "restart 1 of at most 2 (sift launch --max-restarts): " + reason);
  }
};

TEST_F(Restarts, OneHostRestartsAfterAKilledRankToTheWeightsOfAnUninterruptedRun) {
  const Ended whole = wait(start_here("launch --nproc 2 -- " + train_args("whole", kCommon)), 120);
  ASSERT_EQ(whole.status, 0) << whole;
  const Proc launch =
      start_here("launch --nproc 2 --max-restarts 2 -- " + train_args("restarted", kCommon));
  kill_rank_after_first_save(launch, "restarted", 1);
  const Ended e = wait(launch, 120);
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_CONTAINS(e.err,
                  "sift: launch: rank 1 was killed by signal 9 (Killed); restart 1 of at most 2");
  expect_one_restart("restarted", "rank 1 was killed by signal 9 (Killed)");
  EXPECT_EQ(report("restarted")["train"]["steps"], report("whole")["train"]["steps"]);
  EXPECT_TRUE(model_bytes("restarted") == model_bytes("whole")) << "the weights differ";
}

// One process: the fastText run would go to sift-lite, which does not resume; under
// --max-restarts it goes to sift-main, which does.
TEST_F(Restarts, OneProcessUnderMaxRestartsIsRestartedFromItsLastCkpt) {
  const Proc launch = start_here("launch --nproc 1 --max-restarts 2 -- " +
                                 train_args("single", kCommon + " --set train.epochs=60"));
  kill_rank_after_first_save(launch, "single", 0);
  const Ended e = wait(launch, 120);
  ASSERT_EQ(e.status, 0) << e;
  expect_one_restart("single", "rank 0 was killed by signal 9 (Killed)");
}

// The training data disappears and a rank is killed: every restart resumes from the same
// step and fails there again; after 2 restarts the launch gives up and says so.
TEST_F(Restarts, RanksThatKeepFailingAtTheSameStepStopAfterMaxRestarts) {
  const std::string data = dir_ + "/sms.tsv";
  fs::copy_file(std::string(SIFT_SOURCE_DIR) + "/data/sms_spam/SMSSpamCollection", data);
  const Proc launch =
      start_here("launch --nproc 2 --max-restarts 2 -- " +
                 train_args("failing",
                            " --set train.epochs=200 --set train.checkpoint_minutes=0.002"
                            " --set data.train.path=" +
                                data));
  ASSERT_TRUE(wait_for(dir_ + "/failing/last.ckpt", 60)) << "no checkpoint was saved";
  fs::rename(data, data + ".gone");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (pid_t rank : children(launch.pid)) ::kill(rank, SIGKILL);
  const Ended e = wait(launch, 120);
  EXPECT_EQ(e.status, 1) << e;
  const auto lines = error_lines(e.err);
  ASSERT_FALSE(lines.empty()) << e;
  EXPECT_CONTAINS(lines.back(), "again: gave up after 2 restart(s) (--max-restarts 2)");
  const auto restarts = lines_of(slurp(dir_ + "/failing/restarts.jsonl"));
  ASSERT_EQ(restarts.size(), 2u) << e;
  const auto first = nlohmann::json::parse(restarts[0]),
             second = nlohmann::json::parse(restarts[1]);
  EXPECT_EQ(first["resumed_from_step"], second["resumed_from_step"]);
  EXPECT_EQ(second["restart"], 2);
}

// A refused command (exit status 2: here an unknown --set key) would be refused again:
// the launch stops at once, names it, and restarts nothing.
TEST_F(Restarts, ARefusedCommandIsNotRestarted) {
  const Ended e = wait(start_here("launch --nproc 2 --max-restarts 2 -- " +
                                  train_args("refused", " --set model.dimm=3")),
                       60);
  EXPECT_EQ(e.status, 1) << e;
  EXPECT_EQ(e.err.find("restart 1 of"), std::string::npos) << e;
  const auto lines = error_lines(e.err);
  ASSERT_FALSE(lines.empty()) << e;
  EXPECT_CONTAINS(lines.back(), "exited with status 2: its command or config was refused");
  EXPECT_CONTAINS(lines.back(), "not restarted (--max-restarts 2)");
  EXPECT_FALSE(fs::exists(dir_ + "/refused/restarts.jsonl"));
}

// One agent per node; node1's rank is killed; both agents restart their ranks, which meet
// again on port 29501 and finish with the weights of two ranks that were never stopped.
TEST_F(Restarts, AgentsOnTwoNodesRestartTogetherToTheWeightsOfAnUninterruptedRun) {
  SIFT_NETWORK_OR_SKIP(2);
  const Ended whole = wait(start_here("launch --nproc 2 -- " + train_args("whole", kCommon)), 120);
  ASSERT_EQ(whole.status, 0) << whole;
  std::vector<Proc> agents;
  for (int node = 0; node < 2; ++node) {
    agents.push_back(start_on_node(
        node,
        "launch --nnodes 2 --node-rank " + std::to_string(node) +
            " --master-addr 10.88.0.1 --master-port 29500 --nproc 1 --max-restarts 2 -- " +
            train_args("agents", kCommon),
        {"GLOO_SOCKET_IFNAME=eth0"}));
  }
  kill_rank_after_first_save(agents[1], "agents", 0);
  const Ended e0 = wait(agents[0], 120), e1 = wait(agents[1], 120);
  ASSERT_EQ(e0.status, 0) << e0;
  ASSERT_EQ(e1.status, 0) << e1;
  EXPECT_CONTAINS(e1.err, "sift: launch: rank 1 was killed by signal 9 (Killed); restart 1");
  EXPECT_CONTAINS(e0.err, "sift: launch: rank 0 exited with status 1; restart 1");
  expect_one_restart("agents", "rank 0 exited with status 1");
  EXPECT_TRUE(model_bytes("agents") == model_bytes("whole")) << "the weights differ";
}

}  // namespace restart_test
}  // namespace sift::testing
