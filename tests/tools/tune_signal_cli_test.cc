// `sift tune` stopped by a signal (issue #42): its running trial is stopped too (it saves,
// as `sift train` does), recorded as interrupted and continued by --resume; a trial
// folder whose run.lock is held is never deleted; tune.json follows every trial.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "process.h"
#include "run_sift.h"
#include "tools/tune/trial_record.h"

namespace sift {
namespace tune_signal_cli_test {

namespace fs = std::filesystem;
using testing::quote;
using testing::slurp;
using testing::write_file;

const std::string kSource = SIFT_SOURCE_DIR;

// TREC with a validation at every epoch's end; the search's --set train.epochs=N fixes the
// epochs (a trial of many epochs runs until stopped).
std::string tune_config(const std::string& dir) {
  const std::string path = dir + "/trec.yaml";
  write_file(path, "run: {dir: " + dir +
                       "/runs, threads: 1, seed: 3}\ndata:\n  train: {path: " + kSource +
                       "/tests/data/trec/TREC.train.sample}\n"
                       "  format: label_first\n  encoding: latin-1\n  valid_split: 0.2\n"
                       "  workers: 1\nmodel: {type: fasttext, dim: 10, buckets: 10000}\n"
                       "train: {batch_size: 16}\ntune:\n  model.dim: {int: [5, 20]}\n");
  return path;
}

// Lines of `path` once it has at least `n` (up to a minute).
int64_t wait_for_lines(const std::string& path, int64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int64_t lines = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    lines = static_cast<int64_t>(testing::lines_of(slurp(path)).size());
    if (lines >= n) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return lines;
}

// Whether some process holds `dir`/run.lock.
bool lock_held(const std::string& dir) {
  const int fd = ::open((dir + "/run.lock").c_str(), O_RDWR);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
  ::close(fd);
  return held;
}

std::vector<int64_t> epochs_of(const std::string& metrics) {
  std::vector<int64_t> epochs;
  for (const auto& line : testing::lines_of(slurp(metrics))) {
    epochs.push_back(nlohmann::json::parse(line).value("epoch", int64_t{-1}));
  }
  return epochs;
}

TEST(TuneSignals, SigtermStopsTheRunningTrialRecordsItAndResumeContinuesIt) {
  const std::string dir = testing::make_temp_dir("tune_signal");
  const std::string out = dir + "/t";
  const std::string trial = out + "/trials/trial-000";
  const pid_t tune = testing::start_sift(
      dir, {"tune", tune_config(dir), "--set", "train.epochs=1000000", "--budget", "10m",
            "--trials", "1", "--no-refit", "--quiet", "--out", out});
  ASSERT_GE(wait_for_lines(trial + "/metrics.jsonl", 3), 3) << slurp(dir + "/err");
  ASSERT_EQ(::kill(tune, SIGTERM), 0);
  EXPECT_EQ(testing::wait_for(tune), 128 + SIGTERM);
  const std::string err = slurp(dir + "/err");
  EXPECT_EQ(testing::lines_of(err).size(), 1u) << err;
  EXPECT_NE(err.find("sift tune --resume " + out), std::string::npos) << err;
  // The trial ended with the search: nobody holds its folder, and it saved.
  EXPECT_FALSE(lock_held(trial));
  EXPECT_TRUE(fs::exists(trial + "/last.ckpt"));
  const auto records = read_trials_csv(out + "/trials.csv");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(to_string(records[0].status), "interrupted");
  const auto state = nlohmann::json::parse(slurp(out + "/tune.json"));
  EXPECT_EQ(state.value("trials_run", -1), 1) << state.dump();
  const auto before = epochs_of(trial + "/metrics.jsonl");

  // Resumed, the trial goes on from its last.ckpt (the epochs only rise), in one writer.
  const pid_t again = testing::start_sift(dir, {"tune", "--resume", out, "--quiet"});
  wait_for_lines(trial + "/metrics.jsonl", static_cast<int64_t>(before.size()) + 3);
  ASSERT_EQ(::kill(again, SIGINT), 0);
  EXPECT_EQ(testing::wait_for(again), 128 + SIGINT);
  EXPECT_NE(slurp(out + "/tune.log").find("trial 0 resumed"), std::string::npos)
      << slurp(out + "/tune.log");
  const auto after = epochs_of(trial + "/metrics.jsonl");
  ASSERT_GT(after.size(), before.size());
  for (size_t i = 1; i < after.size(); ++i) EXPECT_GT(after[i], after[i - 1]) << "line " << i;
  EXPECT_FALSE(lock_held(trial));
}

TEST(TuneSignals, ResumeNeverDeletesATrialFolderWhoseLockIsHeld) {
  const std::string dir = testing::make_temp_dir("tune_lock");
  const std::string out = dir + "/t";
  ASSERT_EQ(testing::run_sift("tune " + quote(tune_config(dir)) +
                                  " --set train.epochs=2 --budget 10m --trials 1 --no-refit "
                                  "--out " +
                                  quote(out),
                              dir)
                .status,
            0);
  // trial-001 as a search killed with -9 leaves it: its `sift train` still runs.
  const std::string trial = out + "/trials/trial-001";
  fs::create_directories(trial);
  write_file(trial + "/metrics.jsonl", "{\"epoch\":1}\n");
  const int fd = ::open((trial + "/run.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const auto r = testing::run_sift("tune --resume " + quote(out) + " --trials 2 --quiet", dir);
  EXPECT_TRUE(testing::CleanSiftError(r, {trial, "in use"}));
  EXPECT_EQ(slurp(trial + "/metrics.jsonl"), "{\"epoch\":1}\n");
  ::close(fd);
  const auto ok = testing::run_sift("tune --resume " + quote(out) + " --trials 2", dir);
  EXPECT_EQ(ok.status, 0) << ok;
  EXPECT_EQ(read_trials_csv(out + "/trials.csv").size(), 2u);
}

}  // namespace tune_signal_cli_test
}  // namespace sift
