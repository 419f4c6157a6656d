// The non-finite guard (train.on_nonfinite, issue #19): a diverging run stops with one
// error line naming the step and the keys to change, keeps its last good checkpoints
// usable, skip_batch skips and counts, and weights holding NaN are never used.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "checkpoint_bytes.h"
#include "run_sift.h"

namespace sift {
namespace nonfinite_cli_test {

namespace fs = std::filesystem;
using testing::CleanSiftError;
using testing::quote;
using testing::slurp;

const std::string kSource = SIFT_SOURCE_DIR;
const std::string kData = "data/sms_spam/SMSSpamCollection";
// One quick epoch of the SMS config with a small table: about a second.
const std::string kFast = " --quiet --set train.epochs=1 --set model.buckets=100000";
// lr 1e30 with the summed loss: the first update makes the logits overflow, so the
// third step's loss is NaN (measured: step 3, every time).
const std::string kDiverge = " --set train.optimizer.lr=1e30";
// What every divergence message tells the user to try.
const std::vector<std::string> kAdvice = {"train.optimizer.lr", "train.loss_reduction",
                                          "train.clip_norm"};

class NonfiniteCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::make_temp_dir("sift_nonfinite"); }
  void TearDown() override { fs::remove_all(dir_); }
  testing::SiftResult sift(const std::string& args) {
    return testing::run_sift(args, dir_, "", kSource);
  }
  testing::SiftResult train(const std::string& extra = "") {
    return sift("train configs/sms_spam.yaml" + kFast + " --set run.dir=" + quote(dir_) +
                " --set run.name=r" + extra);
  }
  std::string run() const { return dir_ + "/r"; }
  std::string dir_;
};

std::vector<std::string> with(std::vector<std::string> v, const std::vector<std::string>& more) {
  v.insert(v.end(), more.begin(), more.end());
  return v;
}

TEST_F(NonfiniteCli, ADivergingRunStopsWithOneLineNamingTheStepAndTheKeysToChange) {
  const auto r = train(kDiverge);
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_TRUE(CleanSiftError(r, with({"diverged", "at step 3 "}, kAdvice)));
  EXPECT_FALSE(fs::exists(run() + "/report.json")) << "a diverged run reports nothing";
  EXPECT_FALSE(fs::exists(run() + "/last.ckpt")) << "no checkpoint of NaN weights";
}

TEST_F(NonfiniteCli, ADivergenceAfterASaveKeepsLastAndBestCheckpointsAsTheyWereAndUsable) {
  ASSERT_EQ(train().status, 0);
  const std::string last = slurp(run() + "/last.ckpt"), best = slurp(run() + "/best.ckpt");
  const auto r =
      sift("train --resume " + quote(run()) + " --quiet --set train.epochs=2" + kDiverge);
  EXPECT_TRUE(CleanSiftError(r, with({"diverged", "epoch 2"}, kAdvice)));
  EXPECT_EQ(slurp(run() + "/last.ckpt"), last);
  EXPECT_EQ(slurp(run() + "/best.ckpt"), best);
  const auto eval = sift("eval --model " + quote(run()) + " --data " + kData + " --json");
  ASSERT_EQ(eval.status, 0) << eval;
  EXPECT_NE(eval.out.find("\"accuracy\""), std::string::npos) << eval;
  EXPECT_EQ(eval.out.find("nan"), std::string::npos) << eval;
}

// A spam class weight of inf makes every batch holding a spam message non-finite (about
// 40% of batches of 4) while the ham-only batches train: skip_batch skips those updates,
// counts them, and finishes.
TEST_F(NonfiniteCli, SkipBatchFinishesAndReportsTheBatchesItSkipped) {
  const auto r = train(
      " --set train.on_nonfinite=skip_batch --set train.batch_size=4"
      " --set 'train.class_weights=[1, inf]' --set train.optimizer.lr=0.05 --json");
  ASSERT_EQ(r.status, 0) << r;
  const auto report = nlohmann::json::parse(slurp(run() + "/report.json"));
  const int64_t skipped = report["train"]["skipped_nonfinite_batches"].get<int64_t>();
  const int64_t steps = report["train"]["steps"].get<int64_t>();
  EXPECT_GT(skipped, steps / 5) << r;
  EXPECT_LT(skipped, steps) << r;
  const auto eval = sift("eval --model " + quote(run()) + " --data " + kData + " --json");
  EXPECT_EQ(eval.status, 0) << eval;
}

TEST_F(NonfiniteCli, SkipBatchStillStopsAfterAHundredSkippedBatchesInARow) {
  const auto r = train(" --set train.on_nonfinite=skip_batch" + kDiverge);
  EXPECT_TRUE(CleanSiftError(r, with({"100 batches in a row", "skip_batch"}, kAdvice)));
}

TEST_F(NonfiniteCli, WeightsHoldingNaNAreRefusedByEvalAndPredictNamingTheFile) {
  ASSERT_EQ(train().status, 0);
  // best.ckpt holds its own weights or names last.ckpt's: poison whichever holds them.
  // The error names best.ckpt either way, the file the run's weights are read through.
  if (!testing::poison_model_weights(run() + "/best.ckpt")) {
    ASSERT_TRUE(testing::poison_model_weights(run() + "/last.ckpt"));
  }
  const std::string holder = run() + "/best.ckpt";
  const auto eval = sift("eval --model " + quote(run()) + " --data " + kData);
  EXPECT_TRUE(CleanSiftError(eval, {holder, "NaN", "diverged", "train.optimizer.lr"}));
  const auto predict = sift("predict --model " + quote(run()) + " --input " + kData);
  EXPECT_TRUE(CleanSiftError(predict, {holder, "NaN", "diverged"}));
}

}  // namespace nonfinite_cli_test
}  // namespace sift
