// Data that changes under a run (issue #42): a training file cut short or deleted inside
// an epoch is caught at that epoch's end, and, being the data's fault and not the
// weights', last.ckpt is saved first and the one error line says how to go on; a resume
// that --sets the data or its split is refused unless --allow-data-change, which
// report.json records.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "process.h"
#include "run_sift.h"

namespace sift {
namespace data_change_cli_test {

namespace fs = std::filesystem;
using testing::quote;
using testing::slurp;
using testing::write_file;

const std::string kSource = SIFT_SOURCE_DIR;

class DataChange : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::make_temp_dir("sift_data_change");
    // The SMS data 30 times over (170,000 lines): an epoch of dim 100 and trigrams lasts
    // long enough here to change the file inside it.
    const std::string sms = slurp(kSource + "/data/sms_spam/SMSSpamCollection");
    std::string big;
    for (int i = 0; i < 30; ++i) big += sms;
    write_file(dir_ + "/train.tsv", big);
    write_file(dir_ + "/train.yaml",
               "run: {dir: " + dir_ + ", name: r, threads: 1}\n"
               "data: {train: {path: " + dir_ + "/train.tsv}, format: tsv, text: 1, label: 0,\n"
               "       valid_split: 0.1, workers: 1}\n"
               "model: {type: fasttext, dim: 100, ngrams: 3, buckets: 200000}\n"
               "train: {epochs: 1, batch_size: 32, log_every: 20, save_last: end}\n");
  }
  std::string run() const { return dir_ + "/r"; }
  // Trains with `env`, and once the first step is logged does `change` to the data.
  int train_and_change(const std::string& env, const std::function<void()>& change) {
    if (!env.empty()) ::setenv("SIFT_LITE", "0", 1);
    const pid_t pid = testing::start_sift(dir_, {"train", dir_ + "/train.yaml", "--quiet"});
    ::unsetenv("SIFT_LITE");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (slurp(run() + "/train.log").find(" step ") == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    change();
    return testing::wait_for(pid);
  }
  std::string dir_;
};

TEST_F(DataChange, AFileCutShortInsideTheLastEpochIsCaughtThereAndLastCkptSaved) {
  for (const std::string env : {"", "SIFT_LITE=0"}) {
    SCOPED_TRACE(env);
    SetUp();
    const int status = train_and_change(env, [&] { fs::resize_file(dir_ + "/train.tsv", 40000); });
    const std::string err = slurp(dir_ + "/err");
    EXPECT_NE(status, 0) << err;
    EXPECT_EQ(testing::lines_of(err).size(), 1u) << err;
    EXPECT_NE(err.find("sift: error: shard " + dir_ + "/train.tsv changed size"), std::string::npos)
        << err;
    EXPECT_NE(err.find("during epoch 1"), std::string::npos) << err;
    EXPECT_NE(err.find(run() + "/last.ckpt saved"), std::string::npos) << err;
    EXPECT_NE(err.find("sift train --resume " + run()), std::string::npos) << err;
    EXPECT_TRUE(fs::exists(run() + "/last.ckpt"));
    EXPECT_FALSE(fs::exists(run() + "/report.json"));
  }
}

TEST_F(DataChange, AFileDeletedInsideAnEpochIsCaughtThereAndLastCkptSaved) {
  const int status = train_and_change("", [&] { fs::remove(dir_ + "/train.tsv"); });
  const std::string err = slurp(dir_ + "/err");
  EXPECT_NE(status, 0) << err;
  EXPECT_NE(err.find("is missing during epoch 1"), std::string::npos) << err;
  EXPECT_NE(err.find("last.ckpt saved"), std::string::npos) << err;
  EXPECT_TRUE(fs::exists(run() + "/last.ckpt"));
}

TEST_F(DataChange, AResumeThatChangesTheSplitOrTheFilesIsRefusedUnlessAllowed) {
  const auto trained = testing::run_sift(
      "train configs/sms_spam.yaml --quiet --set train.epochs=1 --set model.buckets=100000 "
      "--set run.dir=" + quote(dir_) + " --set run.name=r",
      dir_, "", kSource);
  ASSERT_EQ(trained.status, 0) << trained;
  for (const std::string& set : std::vector<std::string>{
           "data.valid_split=0.5", "data.train.path=" + dir_ + "/train.tsv", "data.folds=5"}) {
    const auto r = testing::run_sift("train --quiet --resume " + quote(run()) +
                                         " --set train.epochs=2 --set " + quote(set),
                                     dir_, "", kSource);
    EXPECT_TRUE(testing::CleanSiftError(r, {"--set " + set.substr(0, set.find('=')),
                                            "--allow-data-change"}));
  }
  const auto allowed = testing::run_sift("train --quiet --resume " + quote(run()) +
                                             " --set train.epochs=2 --set data.valid_split=0.2 "
                                             "--allow-data-change",
                                         dir_, "", kSource);
  ASSERT_EQ(allowed.status, 0) << allowed;
  const auto report = nlohmann::json::parse(slurp(run() + "/report.json"));
  EXPECT_EQ(report["data_changed_on_resume"], nlohmann::json::array({"data.valid_split"}));
}

}  // namespace data_change_cli_test
}  // namespace sift
