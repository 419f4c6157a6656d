// The fastText table in a run's checkpoints: of its 2M bucket rows a small set's training
// changes a few thousand, and last.ckpt holds those (Checkpoint::fills) instead of 64 MB;
// a run stopped and resumed from such a file ends with the weights of a run never
// stopped, on both training paths, and `sift eval` reads it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "checkpoint_bytes.h"
#include "golden_fixture.h"
#include "run_sift.h"

namespace sift {
namespace checkpoint_rows_cli_test {

namespace fs = std::filesystem;
using testing::quote;
using Result = testing::SiftResult;
using testing::operator<<;

class CheckpointRowsCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::golden_fixture_copy("sift_checkpoint_rows"); }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // The golden run with 2M buckets (dim 8: 64 MB of table) and a constant learning rate
  // (train.max_steps would otherwise shorten the schedule of the stopped run).
  Result train(const std::string& name, const std::string& path, const std::string& sets) {
    return testing::run_sift(
        "train golden.yaml --quiet --set model.buckets=2000000"
        " --set train.scheduler.type=constant --set run.name=" +
            name + " --set train.fast_path=" + path + " " + sets,
        dir_, "", dir_);
  }
  std::string run(const std::string& name) { return dir_ + "/runs/" + name; }
  std::string dir_;
};

TEST_F(CheckpointRowsCli, AStoppedRunResumesFromTheChangedRowsToTheUnstoppedRunsWeights) {
  for (const std::string path : {"off", "auto"}) {
    SCOPED_TRACE("train.fast_path: " + path);
    const Result whole = train("whole_" + path, path, "");
    ASSERT_EQ(whole.status, 0) << whole;
    const std::string last = run("whole_" + path) + "/last.ckpt";
    EXPECT_LT(fs::file_size(last), 4u << 20) << "the table was written whole";
    const Result cut = train("cut_" + path, path, "--set train.max_steps=20");
    ASSERT_EQ(cut.status, 0) << cut;
    const Result resumed = testing::run_sift(
        "train --resume runs/cut_" + path + " --quiet --set train.max_steps=0", dir_, "", dir_);
    ASSERT_EQ(resumed.status, 0) << resumed;
    const std::string weights = testing::checkpoint_section(last, "model");
    ASSERT_FALSE(weights.empty());
    EXPECT_TRUE(weights == testing::checkpoint_section(run("cut_" + path) + "/last.ckpt", "model"))
        << "the resumed run's weights differ from the unstopped run's";
  }
}

TEST_F(CheckpointRowsCli, EvalReadsTheChangedRowsAsTheRunEvaluatedThem) {
  const Result trained = train("r", "auto", "");
  ASSERT_EQ(trained.status, 0) << trained;
  const Result evaluated = testing::run_sift("eval --model runs/r --json", dir_, "", dir_);
  ASSERT_EQ(evaluated.status, 0) << evaluated;
  const auto report = nlohmann::json::parse(testing::slurp(run("r") + "/report.json"));
  const auto test = nlohmann::json::parse(evaluated.out).at("splits").at("test");
  for (const char* metric : {"accuracy", "macro_f1"}) {
    EXPECT_DOUBLE_EQ(test.at(metric).get<double>(),
                     report.at("splits").at("test").at(metric).get<double>())
        << metric;
  }
}

}  // namespace checkpoint_rows_cli_test
}  // namespace sift
