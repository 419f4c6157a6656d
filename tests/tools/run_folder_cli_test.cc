// Run folders that protect themselves (issue #19): refusing to train into a used folder,
// replacing it only when asked, the lock that keeps a second process out, the hashes
// that tie checkpoints to labels.txt / vocab.txt / config.yaml, and names that stay
// inside run.dir.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "run_sift.h"

namespace sift {
namespace run_folder_cli_test {

namespace fs = std::filesystem;
using testing::quote;
using testing::slurp;
using testing::write_file;

const std::string kSource = SIFT_SOURCE_DIR;
// One quick epoch of the SMS config, a small table: about a second.
const std::string kFast = " --quiet --set train.epochs=1 --set model.buckets=100000";

class RunFolderCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::make_temp_dir("sift_run_folder"); }
  void TearDown() override { fs::remove_all(dir_); }
  testing::SiftResult sift(const std::string& args, const std::string& input = "") {
    return testing::run_sift(args, dir_, input, kSource);
  }
  // `sift train` of the SMS config into run.dir=dir_, run.name=r, plus `extra`.
  testing::SiftResult train(const std::string& extra = "") {
    return sift("train configs/sms_spam.yaml" + kFast + " --set run.dir=" + quote(dir_) +
                " --set run.name=r" + extra);
  }
  std::string run() const { return dir_ + "/r"; }
  std::string dir_;
};

TEST_F(RunFolderCli, TrainingIntoAUsedRunFolderIsRefusedAndLeavesItAsItWas) {
  ASSERT_EQ(train().status, 0);
  const std::string labels = slurp(run() + "/labels.txt");
  const std::string best = slurp(run() + "/best.ckpt");
  EXPECT_TRUE(testing::CleanSiftError(train(" --set train.epochs=2"),
                                      {run(), "not empty", "--overwrite", "run.overwrite: true"}));
  EXPECT_EQ(slurp(run() + "/labels.txt"), labels);
  EXPECT_EQ(slurp(run() + "/best.ckpt"), best);
}

TEST_F(RunFolderCli, OverwriteReplacesTheWholeFolderAndLeavesNoOldFiles) {
  ASSERT_EQ(train().status, 0);
  write_file(run() + "/metrics.csv.tmp-abc123", "a write cut short");  // Sift's own leftover
  fs::create_directory(run() + "/tb");
  const auto r = train(" --overwrite");
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_FALSE(fs::exists(run() + "/metrics.csv.tmp-abc123"));
  EXPECT_FALSE(fs::exists(run() + "/tb"));
  EXPECT_TRUE(fs::exists(run() + "/best.ckpt"));
  // Nothing left beside the run folder (the swapped-out old folder is deleted).
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir_)) entries += e.is_directory() ? 1 : 0;
  EXPECT_EQ(entries, 1);
  EXPECT_EQ(train(" --set run.overwrite=true").status, 0);
}

// Issue #42: --overwrite deleted the user's own files in the folder without a word.
TEST_F(RunFolderCli, OverwriteRefusesAFolderHoldingFilesSiftDidNotWriteUnlessGivenTwice) {
  ASSERT_EQ(train().status, 0);
  write_file(run() + "/notes.md", "my notes");
  write_file(run() + "/model.pt", "an export kept beside the run");
  const std::string best = slurp(run() + "/best.ckpt");
  EXPECT_TRUE(testing::CleanSiftError(train(" --overwrite"),
                                      {"2 files Sift did not write", "model.pt, notes.md",
                                       "--overwrite twice", "run.overwrite_foreign"}));
  EXPECT_TRUE(testing::CleanSiftError(train(" --set run.overwrite=true"), {"notes.md"}));
  EXPECT_EQ(slurp(run() + "/notes.md"), "my notes");
  EXPECT_EQ(slurp(run() + "/best.ckpt"), best);
  const auto twice = train(" --overwrite --overwrite");
  ASSERT_EQ(twice.status, 0) << twice;
  EXPECT_NE(twice.err.find("deleting " + run() + "/notes.md"), std::string::npos) << twice;
  EXPECT_NE(twice.err.find("deleting " + run() + "/model.pt"), std::string::npos) << twice;
  EXPECT_FALSE(fs::exists(run() + "/notes.md"));
  EXPECT_TRUE(fs::exists(run() + "/best.ckpt"));
}

TEST_F(RunFolderCli, ASecondProcessIsRefusedNamingThePidThatHoldsTheLock) {
  ASSERT_EQ(train().status, 0);
  // This process holds the lock as a running `sift train` would.
  const int fd = ::open((run() + "/run.lock").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const std::string pid = std::to_string(::getpid());
  ASSERT_EQ(::ftruncate(fd, 0), 0);
  ASSERT_GT(::pwrite(fd, (pid + "\n").data(), pid.size() + 1, 0), 0);
  EXPECT_TRUE(testing::CleanSiftError(sift("train --quiet --resume " + quote(run())),
                                      {run(), "in use by process " + pid}));
  EXPECT_TRUE(testing::CleanSiftError(train(" --overwrite"), {"in use by process " + pid}));
  EXPECT_TRUE(testing::CleanSiftError(
      sift("export " + quote(run()) + " --out " + quote(run() + "/model.pt")),
      {"in use by process " + pid}));
  EXPECT_TRUE(fs::exists(run() + "/best.ckpt"));  // the overwrite did not happen
  ::close(fd);
  EXPECT_EQ(sift("export " + quote(run()) + " --out " + quote(run() + "/model.pt")).status, 0);
}

TEST_F(RunFolderCli, SwappedLabelsAreNamedInsteadOfPredictingWithThem) {
  ASSERT_EQ(train().status, 0);
  write_file(run() + "/labels.txt", "spam\nham\n");
  EXPECT_TRUE(testing::CleanSiftError(sift("predict --model " + quote(run()), "hello\n"),
                                      {run() + "/labels.txt", "changed since", "best.ckpt"}));
  EXPECT_TRUE(testing::CleanSiftError(sift("train --quiet --resume " + quote(run())),
                                      {run() + "/labels.txt", "changed since"}));
}

TEST_F(RunFolderCli, AChangedVocabularyOrModelSettingIsNamed) {
  ASSERT_EQ(train().status, 0);
  const std::string vocab = slurp(run() + "/vocab.txt");
  write_file(run() + "/vocab.txt", vocab + vocab.substr(0, vocab.find('\n') + 1));
  EXPECT_TRUE(testing::CleanSiftError(sift("predict --model " + quote(run()), "hello\n"),
                                      {run() + "/vocab.txt"}));
  write_file(run() + "/vocab.txt", vocab);
  EXPECT_EQ(sift("predict --model " + quote(run()), "hello\n").status, 0);
  std::string config = slurp(run() + "/config.yaml");
  const size_t at = config.find("  dim: 10\n");
  ASSERT_NE(at, std::string::npos) << config;
  write_file(run() + "/config.yaml", config.replace(at, 10, "  dim: 12\n"));
  EXPECT_TRUE(testing::CleanSiftError(sift("predict --model " + quote(run()), "hello\n"),
                                      {run() + "/config.yaml", "changed since"}));
}

TEST_F(RunFolderCli, AnEmptyConfigIsBlamedOnConfigYaml) {
  ASSERT_EQ(train().status, 0);
  write_file(run() + "/config.yaml", "");
  EXPECT_TRUE(testing::CleanSiftError(sift("predict --model " + quote(run()), "hello\n"),
                                      {run() + "/config.yaml"}));
}

TEST_F(RunFolderCli, ADeletedBestCheckpointDoesNotFallBackToLast) {
  ASSERT_EQ(train().status, 0);
  fs::remove(run() + "/best.ckpt");
  EXPECT_TRUE(testing::CleanSiftError(sift("predict --model " + quote(run()), "hello\n"),
                                      {run() + "/best.ckpt", "missing"}));
}

// best.ckpt holds its weights itself (issue #38): a 1,038-byte best.ckpt naming
// last.ckpt's weights left a folder copied without last.ckpt unable to predict.
TEST_F(RunFolderCli, AFolderCopiedWithoutLastCkptStillPredictsEvaluatesAndExports) {
  ASSERT_EQ(train().status, 0);  // one epoch: the best validation is the last save's
  const std::string copy = dir_ + "/copy";
  fs::create_directory(copy);
  for (const auto& e : fs::directory_iterator(run())) {
    const std::string name = e.path().filename().string();
    if (name != "last.ckpt" && name != "run.lock") fs::copy_file(e.path(), copy + "/" + name);
  }
  const auto predicted = sift("predict --model " + quote(copy), "free prize, call now\n");
  ASSERT_EQ(predicted.status, 0) << predicted;
  EXPECT_EQ(predicted.out, sift("predict --model " + quote(run()), "free prize, call now\n").out);
  const auto evaluated =
      sift("eval --model " + quote(copy) + " --data data/sms_spam/SMSSpamCollection");
  EXPECT_EQ(evaluated.status, 0) << evaluated;
  const auto exported = sift("export " + quote(copy) + " --out " + quote(dir_ + "/copy.pt"));
  EXPECT_EQ(exported.status, 0) << exported;
  // And the original folder's best.ckpt outlives its last.ckpt.
  fs::remove(run() + "/last.ckpt");
  EXPECT_EQ(sift("predict --model " + quote(run()), "hello\n").status, 0);
}

// Data paths in config.yaml are relative to the run folder, so a resume from another
// working folder finds the data (it looked for data/sms_spam/... under the new folder).
TEST_F(RunFolderCli, AResumeFromAnotherWorkingFolderFindsTheRunsData) {
  ASSERT_EQ(train().status, 0);
  const std::string config = slurp(run() + "/config.yaml");
  const std::string data = fs::path(kSource + "/data/sms_spam/SMSSpamCollection")
                               .lexically_normal()
                               .lexically_relative(fs::absolute(run()).lexically_normal())
                               .string();
  EXPECT_NE(config.find(data), std::string::npos) << "config.yaml should hold " << data;
  const auto resumed = testing::run_sift(
      "train --quiet --resume " + quote(run()) + " --set train.epochs=2", dir_, "", dir_);
  EXPECT_EQ(resumed.status, 0) << resumed;
  EXPECT_EQ(testing::lines_of(slurp(run() + "/metrics.jsonl")).size(), 2u);
}

TEST_F(RunFolderCli, ExportOverTheRunsOwnFilesIsRefused) {
  ASSERT_EQ(train().status, 0);
  const std::string best = slurp(run() + "/best.ckpt");
  for (const char* f : {"best.ckpt", "last.ckpt", "labels.txt", "config.yaml"}) {
    EXPECT_TRUE(testing::CleanSiftError(
        sift("export " + quote(run()) + " --out " + quote(run() + "/" + f)), {f, "not an export"}));
  }
  EXPECT_EQ(slurp(run() + "/best.ckpt"), best);
}

TEST_F(RunFolderCli, RunNamesThatLeaveRunDirAreRefused) {
  for (const std::string name : {"../x", "..", "/tmp/x", "a/b"}) {
    EXPECT_TRUE(testing::CleanSiftError(
        sift("train configs/sms_spam.yaml" + kFast + " --set run.dir=" + quote(dir_ + "/runs") +
             " --set run.name=" + quote(name)),
        {"run.name"}))
        << name;
  }
  EXPECT_FALSE(fs::exists(dir_ + "/x"));
  EXPECT_FALSE(fs::exists(dir_ + "/runs"));
}

}  // namespace run_folder_cli_test
}  // namespace sift
