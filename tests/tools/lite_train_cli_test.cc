// `sift train` of the fastText model on its fast path runs sift-lite, without LibTorch:
// the same weights, bit for bit, as sift-main's (SIFT_LITE=0) in last.ckpt and best.ckpt,
// the same metrics, a run folder sift-main resumes; what it hands to sift-main.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "framework/runtime/base/checkpoint_file.h"
#include "run_sift.h"

namespace sift {
namespace lite_train_cli_test {

namespace fs = std::filesystem;
using testing::CleanSiftError;
using testing::lines_of;
using testing::quote;
using Result = testing::SiftResult;
using testing::operator<<;

const std::string kSource = SIFT_SOURCE_DIR;
const std::string kTrec = kSource + "/tests/data/trec/";

nlohmann::json json_file(const std::string& path) {
  return nlohmann::json::parse(testing::slurp(path));
}

// A checkpoint's "model" section, as stored.
std::string model_bytes(const std::string& path) {
  const StoredCheckpoint c = read_checkpoint(path);
  const auto it = c.blobs.find("model");
  return it == c.blobs.end() ? "" : it->second;
}

class LiteTrainCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::make_temp_dir("sift_lite_train"); }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Result sift(const std::string& args, const std::string& env = "") {
    return testing::run_command(env + " " + quote(SIFT_BINARY) + " " + args, dir_, "", kSource);
  }
  // configs/trec.yaml on the fixture, 20% of it held out for validation (best.ckpt).
  std::string train_args(const std::string& name, const std::string& sets) {
    return "train configs/trec.yaml --quiet --json --set run.dir=" + quote(dir_) +
           " --set run.name=" + name +
           " --set data.train.path=" + quote(kTrec + "TREC.train.sample") +
           " --set data.test.path=" + quote(kTrec + "TREC.test.sample") +
           " --set data.valid_split=0.2 " + sets;
  }
  // The same run by sift-lite and by sift-main (SIFT_LITE=0), in lite-NAME and main-NAME:
  // sift-lite trains it (nothing handed over), the weights of last.ckpt and best.ckpt are
  // the same bytes, the reports' accuracies, confusion, per-label scores and losses equal:
  // both programs train and evaluate the fast path with one learner (fasttext_learner.h).
  void expect_same_runs(const std::string& name, const std::string& sets) {
    const Result lite = sift(train_args("lite-" + name, sets), "SIFT_LITE_WHY=1");
    const Result main = sift(train_args("main-" + name, sets), "SIFT_LITE=0");
    ASSERT_EQ(lite.status, 0) << lite;
    ASSERT_EQ(main.status, 0) << main;
    EXPECT_EQ(lite.err, "") << name;
    const std::string a = dir_ + "/lite-" + name + "/", b = dir_ + "/main-" + name + "/";
    for (const char* file : {"last.ckpt", "best.ckpt"}) {
      ASSERT_TRUE(fs::exists(a + file)) << name << " " << file;
      EXPECT_EQ(model_bytes(a + file), model_bytes(b + file)) << name << " " << file;
    }
    EXPECT_FALSE(model_bytes(a + "last.ckpt").empty());
    const nlohmann::json ra = json_file(a + "report.json"), rb = json_file(b + "report.json");
    for (const char* split : {"valid", "test"}) {
      const auto& x = ra["splits"][split];
      const auto& y = rb["splits"][split];
      EXPECT_EQ(x.at("accuracy"), y.at("accuracy")) << name << " " << split;
      EXPECT_EQ(x.at("confusion"), y.at("confusion")) << name << " " << split;
      EXPECT_EQ(x.at("per_class"), y.at("per_class")) << name << " " << split;
      EXPECT_EQ(x.at("loss"), y.at("loss")) << name << " " << split;
    }
    EXPECT_EQ(ra["train"]["best_epoch"], rb["train"]["best_epoch"]) << name;
    EXPECT_EQ(ra["train"]["steps"], rb["train"]["steps"]) << name;
  }

  // Stops a run of `sets` by SIGTERM inside its epochs, resumes it, trains it whole in
  // another folder, and expects the same weights and test accuracy.
  void expect_resumed_as_whole(const std::string& sets) {
    const Result stopped =
        testing::run_command("(" + quote(SIFT_BINARY) + " " + train_args("part", sets) +
                                 " & pid=$!; sleep 1; kill -TERM $pid; wait $pid)",
                             dir_, "", kSource);
    ASSERT_EQ(stopped.status, 128 + 15) << stopped;
    EXPECT_NE(stopped.err.find("stopped by SIGTERM"), std::string::npos) << stopped;
    EXPECT_NE(stopped.err.find("sift train --resume"), std::string::npos) << stopped;
    ASSERT_FALSE(model_bytes(dir_ + "/part/last.ckpt").empty());
    const Result resumed =
        sift("train --quiet --resume " + quote(dir_ + "/part"), "SIFT_LITE_WHY=1");
    ASSERT_EQ(resumed.status, 0) << resumed;
    EXPECT_NE(resumed.err.find("sift-main train: --resume"), std::string::npos) << resumed;
    const Result whole = sift(train_args("whole", sets));
    ASSERT_EQ(whole.status, 0) << whole;
    EXPECT_EQ(model_bytes(dir_ + "/part/last.ckpt"), model_bytes(dir_ + "/whole/last.ckpt"));
    EXPECT_EQ(json_file(dir_ + "/part/report.json")["splits"]["test"]["accuracy"],
              json_file(dir_ + "/whole/report.json")["splits"]["test"]["accuracy"]);
  }

  std::string dir_;
};

TEST_F(LiteTrainCli, TrainsTheWeightsSiftMainTrainsBitForBit) {
  expect_same_runs("softmax", "");
  const std::string a = dir_ + "/lite-softmax/", b = dir_ + "/main-softmax/";
  const nlohmann::json ra = json_file(a + "report.json"), rb = json_file(b + "report.json");
  EXPECT_EQ(ra["environment"]["program"], "sift-lite");
  EXPECT_EQ(ra["train"]["training_path"],
            "fast path: fused SGD, 1 thread, without LibTorch (sift-lite)");
  EXPECT_EQ(rb["train"]["training_path"], "fast path: fused SGD, 1 thread");
  const auto ma = lines_of(testing::slurp(a + "metrics.jsonl"));
  const auto mb = lines_of(testing::slurp(b + "metrics.jsonl"));
  ASSERT_EQ(ma.size(), 5u);
  ASSERT_EQ(ma.size(), mb.size());
  for (size_t i = 0; i < ma.size(); ++i) {
    const auto x = nlohmann::json::parse(ma[i]), y = nlohmann::json::parse(mb[i]);
    EXPECT_EQ(x["train_loss"], y["train_loss"]) << i;
    EXPECT_EQ(x["valid_accuracy"], y["valid_accuracy"]) << i;
  }
  EXPECT_EQ(lines_of(testing::slurp(a + "metrics.csv")).size(),
            lines_of(testing::slurp(b + "metrics.csv")).size());
  for (const char* file :
       {"config.yaml", "labels.txt", "vocab.txt", "report.txt", "report.html", "train.log"}) {
    EXPECT_TRUE(fs::exists(a + file)) << file;
  }
}

TEST_F(LiteTrainCli, TrainsHsAndOvaAsSiftMainDoesBitForBit) {
  expect_same_runs("hs", "--set train.loss=hs");
  expect_same_runs("ova", "--set train.loss=ova");
}

TEST_F(LiteTrainCli, KeepsAnEarlierEpochsBestWeightsAsSiftMainDoesBitForBit) {
  // 10 epochs: epoch 8's weights are the best; training goes on from them while sift-lite
  // keeps the rows it changes as they were (RowJournal), and writes best.ckpt at the end.
  expect_same_runs("journal", "--set train.epochs=10");
  // 2000 buckets: the rows an epoch changes pass a quarter of the table, and the best
  // weights go to best.ckpt then.
  expect_same_runs("spill", "--set model.buckets=2000 --set train.epochs=8");
  for (const auto& [name, epochs] : {std::pair<std::string, int>{"journal", 10}, {"spill", 8}}) {
    const nlohmann::json r = json_file(dir_ + "/lite-" + name + "/report.json");
    EXPECT_LT(r["train"]["best_epoch"].get<int>(), epochs) << name;  // not the last epoch's
  }
}

TEST_F(LiteTrainCli, HandsWhatItDoesNotTrainToSiftMain) {
  for (const auto& [set, why] : std::vector<std::pair<std::string, std::string>>{
           {"--set train.loss=ns", "train.loss ns"},
           {"--set train.fast_path=off", "train.fast_path: off"},
           {"--set train.optimizer.momentum=0.9", "train.optimizer.momentum > 0"},
           {"--set model.type=mlp", "model.type is not fasttext"}}) {
    // One epoch, a small table: the LibTorch runs stay short.
    const Result r =
        sift(train_args("h", set + " --set train.epochs=1 --set model.buckets=1000 --overwrite"),
             "SIFT_LITE_WHY=1");
    ASSERT_EQ(r.status, 0) << set << "\n" << r;
    EXPECT_NE(r.err.find("sift-lite: sift-main train: " + why), std::string::npos) << r;
    EXPECT_EQ(json_file(dir_ + "/h/report.json")["environment"]["program"], "sift-main") << set;
  }
}

TEST_F(LiteTrainCli, TrainsOnHogwildThreadsToo) {
  const Result r = sift(train_args("hog", "--set train.fast_path_threads=2"), "SIFT_LITE_WHY=1");
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.err, "");
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["train"]["training_path"],
            "fast path: fused SGD, 2 threads, without LibTorch (sift-lite)");
  // Each of the 5 epochs sees every training record once, whichever thread reads it.
  EXPECT_EQ(summary["train"]["examples"].get<int64_t>(),
            5 * summary["train"]["records"].get<int64_t>());
  EXPECT_GE(summary["splits"]["test"]["accuracy"].get<double>(), 0.6) << r.out;
  EXPECT_FALSE(model_bytes(dir_ + "/hog/last.ckpt").empty());
}

TEST_F(LiteTrainCli, RunThreadsZeroSplitsTheCoresAndBothProgramsSayHow) {
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  const int64_t trainers = cores < 4 ? 1 : cores / 2;
  const int64_t readers = cores < 4 ? std::max<int64_t>(1, cores - 1) : trainers;
  const std::string split = "(run.threads 0: " + std::to_string(cores) +
                            " cores = " + std::to_string(trainers) + " trainer";
  for (const auto& [name, env] : std::vector<std::pair<std::string, std::string>>{
           {"lite", "SIFT_LITE_WHY=1"}, {"main", "SIFT_LITE=0"}}) {
    const Result r = sift(train_args(name, "--set run.threads=0 --set train.epochs=1"), env);
    ASSERT_EQ(r.status, 0) << r;
    const std::string path = nlohmann::json::parse(r.out)["train"]["training_path"];
    EXPECT_NE(path.find(split), std::string::npos) << name << ": " << path;
    EXPECT_NE(path.find(std::to_string(readers) + " reader"), std::string::npos) << path;
    EXPECT_NE(testing::slurp(dir_ + "/" + name + "/train.log").find(split), std::string::npos);
    // config.yaml records what the run took, so that a resume reads the same threads.
    const std::string config = testing::slurp(dir_ + "/" + name + "/config.yaml");
    EXPECT_NE(config.find("fast_path_threads: " + std::to_string(trainers)), std::string::npos);
    if (trainers == 1) {
      EXPECT_NE(config.find("workers: " + std::to_string(readers)), std::string::npos) << config;
    }
  }
  // Left at its value of the config (1), the threads stay as configured: no split is said.
  const Result one = sift(train_args("one", "--set train.epochs=1"));
  ASSERT_EQ(one.status, 0) << one;
  EXPECT_EQ(nlohmann::json::parse(one.out)["train"]["training_path"],
            "fast path: fused SGD, 1 thread, without LibTorch (sift-lite)");
}

TEST_F(LiteTrainCli, ConfigErrorsAreSiftMainsOneLine) {
  // Refused before any run folder, by sift-main as it always refused them.
  const Result bad = sift(train_args("bad", "--set train.epochs=0"));
  const Result main = sift(train_args("bad", "--set train.epochs=0"), "SIFT_LITE=0");
  EXPECT_TRUE(CleanSiftError(bad, {"train.epochs"}));
  EXPECT_EQ(bad.err, main.err);
  EXPECT_FALSE(fs::exists(dir_ + "/bad"));
  EXPECT_TRUE(CleanSiftError(sift(train_args("bad", "--set data.train.path=missing.txt")),
                             {"missing.txt"}));
}

TEST_F(LiteTrainCli, OnlyTheProgramThatTrainsChecksTheConfigBetweenOptions) {
  // A check between options (validate) on a config sift-lite trains: its own line, as
  // sift-main's, and no run folder.
  const std::string crossed = "--set model.minn=5 --set model.maxn=3";
  const Result lite = sift(train_args("crossed", crossed), "SIFT_LITE_WHY=1");
  const Result main = sift(train_args("crossed", crossed), "SIFT_LITE=0");
  EXPECT_TRUE(CleanSiftError(lite, {"model.minn"}));
  EXPECT_EQ(lite.err, main.err);  // no "sift-lite: sift-main" line: sift-lite checked it
  EXPECT_EQ(lite.status, main.status);
  EXPECT_FALSE(fs::exists(dir_ + "/crossed"));
  // One sift-lite hands over is decided on as loaded and checked by sift-main only: the
  // reason is its key, not the check's error.
  const Result handed =
      sift(train_args("handed", crossed + " --set train.profile=true"), "SIFT_LITE_WHY=1");
  EXPECT_NE(handed.err.find("sift-lite: sift-main train: train.profile\n"), std::string::npos)
      << handed;
  EXPECT_NE(handed.err.find("sift: error: model.minn"), std::string::npos) << handed;
  EXPECT_EQ(handed.status, main.status);
}

TEST_F(LiteTrainCli, ADivergingRunStopsWithOneLine) {
  const Result lite = sift(train_args("nan", "--set train.optimizer.lr=1e30"));
  const Result main = sift(train_args("nan2", "--set train.optimizer.lr=1e30"), "SIFT_LITE=0");
  EXPECT_TRUE(CleanSiftError(lite, {"training diverged", "train.optimizer.lr"}));
  EXPECT_TRUE(CleanSiftError(main, {"training diverged"}));
  EXPECT_EQ(lite.err.substr(0, lite.err.find(" at step")),
            main.err.substr(0, main.err.find(" at step")));
}

TEST_F(LiteTrainCli, ARunStoppedBySigtermResumesInSiftMainToTheWeightsOfAWholeRun) {
  // 1,000 epochs of the sample (about 3 s here): the signal comes inside one, and
  // last.ckpt keeps the data position. A resume always runs in sift-main.
  expect_resumed_as_whole("--set train.epochs=1000 --set train.save_last=end");
}

TEST_F(LiteTrainCli, AnNsRunStoppedBySigtermResumesToTheWeightsOfAWholeRun) {
  // ns draws each batch's negatives from LibTorch's generator (sift-main's fast path):
  // last.ckpt keeps its state, so the resumed run draws on as the whole run does.
  expect_resumed_as_whole(
      "--set train.epochs=1000 --set train.save_last=end --set train.loss=ns --set train.neg=3");
}

}  // namespace lite_train_cli_test
}  // namespace sift
