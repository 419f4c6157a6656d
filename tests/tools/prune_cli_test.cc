// End-to-end tests of train.prune on the embedded SMS spam data: a run stopped while its
// masks are still growing and resumed ends with the same weights and masks as one run
// straight through; the report gives the sparsity reached; bad settings are refused
// naming their key.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint_bytes.h"
#include "run_sift.h"

namespace sift {
namespace prune_cli_test {

namespace fs = std::filesystem;
using testing::checkpoint_view;
using testing::make_temp_dir;
using testing::quote;
using Result = testing::SiftResult;
using testing::operator<<;

const std::string kSource = SIFT_SOURCE_DIR;
// fastText rows pruned to 90% between steps 20 and 200 of about 310 (two epochs of 157).
// A constant learning rate: train.max_steps, which stops the run to be resumed, is also
// the horizon of a decaying schedule. One thread, as the golden run.
const std::string kPrune =
    " --set model.buckets=20000 --set train.epochs=2 --set train.fast_path=off"
    " --set train.scheduler.type=constant --set run.threads=1"
    " --set train.prune.structure=[rows] --set train.prune.sparsity=0.9"
    " --set train.prune.start_step=20 --set train.prune.end_step=200"
    " --set train.prune.every=30";

class PruneCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("sift_prune"); }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Result sift(const std::string& args) { return testing::run_sift(args, dir_, "", kSource); }
  Result train(const std::string& name, const std::string& sets) {
    return sift("train configs/sms_spam.yaml --quiet --json --set run.dir=" + quote(dir_) +
                " --set run.name=" + name + kPrune + sets);
  }
  // A checkpoint's sections (weights, masks, random and data state) without its metadata,
  // which names config.yaml's hash (a resume with --set rewrites config.yaml).
  static std::string sections(const std::string& path) {
    const std::string view = checkpoint_view(path);
    return view.substr(view.find('\n') + 1);
  }
  std::string dir_;
};

TEST_F(PruneCli, AResumedRunEndsWithTheWeightsAndMasksOfAnUninterruptedOne) {
  const Result straight = train("straight", "");
  ASSERT_EQ(straight.status, 0) << straight;
  // Stopped at step 70, between two mask updates (50 and 80), inside the first epoch.
  const Result stopped = train("resumed", " --set train.max_steps=70");
  ASSERT_EQ(stopped.status, 0) << stopped;
  const Result resumed = sift("train --resume " + quote(dir_ + "/resumed") +
                              " --quiet --json --set train.max_steps=0");
  ASSERT_EQ(resumed.status, 0) << resumed;
  const std::string a = sections(dir_ + "/straight/last.ckpt");
  const std::string b = sections(dir_ + "/resumed/last.ckpt");
  EXPECT_NE(a.find("prune_masks\n"), std::string::npos) << "last.ckpt holds the masks";
  EXPECT_TRUE(a == b) << "last.ckpt differs from the uninterrupted run's";
  EXPECT_TRUE(sections(dir_ + "/straight/best.ckpt") == sections(dir_ + "/resumed/best.ckpt"));

  const auto report = nlohmann::json::parse(straight.out);
  const auto& pruning = report["train"]["pruning"];
  const auto& table = pruning["parameters"]["embedding.weight"];
  EXPECT_NEAR(table["sparsity"].get<double>(), 0.9, 1e-3) << pruning.dump();
  EXPECT_EQ(report["train"]["training_path"], "autograd (train.fast_path: off)");
  // Rows pruned to 90% still tell spam from ham.
  EXPECT_GE(report["splits"]["valid"]["accuracy"].get<double>(), 0.9) << straight.out;
}

TEST_F(PruneCli, ThePrunedExportIsSmallerAndPredictsAsTheRunFolder) {
  const Result r = train("r", "");
  ASSERT_EQ(r.status, 0) << r;
  const std::string file = dir_ + "/pruned.pt";
  const Result exported = sift("export " + quote(dir_ + "/r") + " --out " + quote(file));
  ASSERT_EQ(exported.status, 0) << exported;
  const Result dense = train("dense", " --set train.prune.sparsity=0");
  ASSERT_EQ(dense.status, 0) << dense;
  const std::string dense_file = dir_ + "/dense.pt";
  ASSERT_EQ(sift("export " + quote(dir_ + "/dense") + " --out " + quote(dense_file)).status, 0);
  // 10% of the rows, one byte of id map per row, and the same vocabulary and tokenizer
  // files: about a fifth of the dense file (1.28 MB).
  EXPECT_LT(fs::file_size(file), fs::file_size(dense_file) / 4);
  const std::string texts = kSource + "/data/sms_spam/SMSSpamCollection";
  const Result from_run = sift("predict --model " + quote(dir_ + "/r") + " --input " + texts);
  const Result from_file = sift("predict --model " + quote(file) + " --input " + texts);
  ASSERT_EQ(from_run.status, 0) << from_run;
  ASSERT_EQ(from_file.status, 0) << from_file;
  // The same label on every line (the scores agree to 1e-5: tests/train/pruning_test.cc).
  const auto a = testing::lines_of(from_run.out), b = testing::lines_of(from_file.out);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].substr(0, a[i].find('\t')), b[i].substr(0, b[i].find('\t'))) << "line " << i;
  }
}

TEST_F(PruneCli, BadSettingsAreRefusedNamingTheirKey) {
  EXPECT_TRUE(testing::CleanSiftError(train("a", " --set train.prune.sparsity=1"),
                                      {"train.prune.sparsity", "[0, 1)"}));
  EXPECT_TRUE(testing::CleanSiftError(train("b", " --set train.prune.structure=[heads]"),
                                      {"train.prune.structure", "fasttext", "heads"}));
  EXPECT_TRUE(testing::CleanSiftError(train("c", " --set train.prune.end_step=20"),
                                      {"train.prune.end_step"}));
  EXPECT_TRUE(testing::CleanSiftError(train("d", " --set train.prune.structure=[columns]"),
                                      {"train.prune.structure"}));
  EXPECT_TRUE(testing::CleanSiftError(train("e", " --set train.prune.structure=[unstructured]"),
                                      {"train.prune.params"}));
  EXPECT_TRUE(testing::CleanSiftError(
      train("f", " --set train.prune.structure=[unstructured] --set train.prune.params=[nope*]"),
      {"train.prune.params", "nope*"}));
}

}  // namespace prune_cli_test
}  // namespace sift
