// Nothing written outside its folder (issue #42): a symlink planted at any name a run, a
// resumed run, a tune or an export writes is never followed, and a run folder that is
// itself a symlink is refused. Each case keeps a copy of the real file at the link's
// target, so that reads through it still work and only a write can change it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "run_sift.h"

namespace sift {
namespace writes_stay_inside_cli_test {

namespace fs = std::filesystem;
using testing::quote;
using testing::slurp;
using testing::write_file;

const std::string kSource = SIFT_SOURCE_DIR;
const std::string kFast = " --quiet --set train.epochs=1 --set model.buckets=100000";

class WritesStayInside : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::make_temp_dir("sift_inside"); }
  testing::SiftResult sift(const std::string& args, const std::string& env = "") {
    return testing::run_command(env + " " + quote(SIFT_BINARY) + " " + args, dir_, "", kSource);
  }
  testing::SiftResult train(const std::string& name, const std::string& extra = "",
                            const std::string& env = "") {
    return sift("train configs/sms_spam.yaml" + kFast + " --set run.dir=" + quote(dir_) +
                    " --set run.name=" + name + extra,
                env);
  }
  // Every file of `run` replaced in turn by a symlink to a copy outside the folder; a
  // resume to epoch 2 must leave each copy as it was (and may refuse, in one line).
  void resume_through_links(const std::string& run, const std::vector<std::string>& names,
                            const std::string& env) {
    const std::string kept = dir_ + "/kept";
    fs::copy(run, kept, fs::copy_options::recursive);
    for (const std::string& name : names) {
      SCOPED_TRACE(name);
      fs::remove_all(run);
      fs::copy(kept, run, fs::copy_options::recursive);
      const std::string victim = dir_ + "/victim-" + name;
      ASSERT_TRUE(fs::exists(run + "/" + name));
      fs::rename(run + "/" + name, victim);
      fs::create_symlink(victim, run + "/" + name);
      const std::string before = fs::is_directory(victim) ? "" : slurp(victim);
      const auto r = sift("train --quiet --resume " + quote(run) + " --set train.epochs=2", env);
      if (r.status != 0) {
        EXPECT_TRUE(testing::CleanSiftError(r, {run + "/" + name}));
      }
      if (fs::is_directory(victim)) {
        EXPECT_TRUE(fs::is_empty(victim)) << r;
      } else {
        EXPECT_EQ(slurp(victim), before) << r;
      }
      fs::remove_all(victim);
    }
  }
  std::string dir_;
};

const std::vector<std::string> kRunFiles = {
    "config.yaml", "labels.txt", "vocab.txt",   "metrics.jsonl", "metrics.csv", "train.log",
    "last.ckpt",   "best.ckpt",  "report.json", "report.txt",    "report.html"};

// A run sift-lite trained (a resume is sift-main's).
TEST_F(WritesStayInside, AResumeOfASiftLiteRunWritesNoFileThroughAPlantedSymlink) {
  ASSERT_EQ(train("r").status, 0);
  resume_through_links(dir_ + "/r", kRunFiles, "");
}

TEST_F(WritesStayInside, AResumeOfSiftMainWritesNoFileThroughAPlantedSymlink) {
  ASSERT_EQ(train("r", " --set train.tensorboard=true", "SIFT_LITE=0").status, 0);
  fs::remove_all(dir_ + "/r/tb");
  fs::create_directory(dir_ + "/r/tb");
  std::vector<std::string> names = kRunFiles;
  names.push_back("tb");  // a folder of the run: the event files must not land in its target
  resume_through_links(dir_ + "/r", names, "SIFT_LITE=0");
}

TEST_F(WritesStayInside, ARunFolderThatIsASymlinkIsRefusedNamingIt) {
  fs::create_directory(dir_ + "/elsewhere");
  fs::create_directory_symlink(dir_ + "/elsewhere", dir_ + "/r");
  for (const std::string env : {"", "SIFT_LITE=0"}) {
    EXPECT_TRUE(testing::CleanSiftError(train("r", "", env), {"run.dir", dir_ + "/r", "symlink"}));
    EXPECT_TRUE(fs::is_empty(dir_ + "/elsewhere"));
  }
  // A real run, then its folder reached through a link: resume and export refuse it too.
  ASSERT_EQ(train("real").status, 0);
  fs::create_directory_symlink(dir_ + "/real", dir_ + "/link");
  EXPECT_TRUE(testing::CleanSiftError(
      sift("train --quiet --resume " + quote(dir_ + "/link") + " --set train.epochs=2"),
      {dir_ + "/link", "symlink"}));
}

TEST_F(WritesStayInside, AnExportReplacesASymlinkAtItsNameInsteadOfWritingThroughIt) {
  ASSERT_EQ(train("r").status, 0);
  write_file(dir_ + "/victim", "the user's file\n");
  fs::create_symlink(dir_ + "/victim", dir_ + "/model.pt");
  const auto r = sift("export " + quote(dir_ + "/r") + " --out " + quote(dir_ + "/model.pt"));
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(slurp(dir_ + "/victim"), "the user's file\n");
  EXPECT_FALSE(fs::is_symlink(dir_ + "/model.pt"));
}

// A fastText config on the TREC fixture whose trials take about a second.
std::string tune_config(const std::string& dir) {
  const std::string path = dir + "/trec.yaml";
  write_file(path, "run: {dir: " + dir +
                       "/runs, threads: 1, seed: 3}\ndata:\n  train: {path: " + kSource +
                       "/tests/data/trec/TREC.train.sample}\n"
                       "  format: label_first\n  encoding: latin-1\n  valid_split: 0.2\n"
                       "  workers: 1\nmodel: {type: fasttext, dim: 10, buckets: 10000}\n"
                       "train: {epochs: 2, batch_size: 16}\ntune:\n  model.dim: {int: [5, 20]}\n");
  return path;
}

TEST_F(WritesStayInside, ATuneResumeWritesNoTrialLogThroughAPlantedSymlink) {
  const std::string config = tune_config(dir_);
  const std::string out = dir_ + "/t";
  ASSERT_EQ(
      sift("tune " + quote(config) + " --budget 10m --trials 1 --no-refit --out " + quote(out))
          .status,
      0);
  write_file(dir_ + "/victim", "the user's file\n");
  fs::create_symlink("../../victim", out + "/trials/trial-001.log");
  const auto r = sift("tune --resume " + quote(out) + " --trials 2 --quiet");
  if (r.status != 0) {
    EXPECT_TRUE(testing::CleanSiftError(r, {out + "/trials/trial-001.log"}));
  }
  EXPECT_EQ(slurp(dir_ + "/victim"), "the user's file\n") << r;
  // The search's folder itself a link: refused, and nothing lands in its target.
  fs::create_directory(dir_ + "/elsewhere");
  fs::create_directory_symlink(dir_ + "/elsewhere", dir_ + "/t2");
  EXPECT_TRUE(testing::CleanSiftError(
      sift("tune " + quote(config) + " --budget 10m --trials 1 --out " + quote(dir_ + "/t2")),
      {"--out", dir_ + "/t2", "symlink"}));
  EXPECT_TRUE(fs::is_empty(dir_ + "/elsewhere"));
}

}  // namespace writes_stay_inside_cli_test
}  // namespace sift
