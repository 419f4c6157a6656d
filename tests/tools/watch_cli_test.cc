// Watching a run: metrics.csv (per-step rows in Lightning's CSVLogger layout), the phase
// profile in report.json/report.txt, driven through the `sift` executable.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_sift.h"

namespace sift {
namespace {

namespace fs = std::filesystem;
using testing::lines_of;
using testing::quote;

const std::string kSource = SIFT_SOURCE_DIR;

std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  size_t start = 0;
  for (size_t comma; (comma = line.find(',', start)) != std::string::npos; start = comma + 1) {
    cells.push_back(line.substr(start, comma - start));
  }
  cells.push_back(line.substr(start));
  return cells;
}

const std::vector<std::string> kColumns = {
    "step",      "epoch",      "train_loss",     "lr",         "examples_per_s", "tokens_per_s",
    "grad_norm", "loss_scale", "valid_accuracy", "valid_loss", "valid_macro_f1"};

class WatchCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::make_temp_dir("sift_watch"); }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  testing::SiftResult sift(const std::string& args) {
    return testing::run_sift(args, dir_, "", kSource);
  }
  // SMS spam, a small table, a row every 10 steps, into dir_/NAME. Through autograd
  // (train.fast_path: off): the fused SGD loop of the fastText model has no separate
  // forward/backward/optimizer phases and computes no gradient norm.
  std::string train_args(const std::string& name, const std::string& extra) const {
    return "train configs/sms_spam.yaml --quiet --set model.buckets=100000 "
           "--set train.fast_path=off --set train.log_every=10 --set run.dir=" +
           quote(dir_) + " --set run.name=" + name + extra;
  }
  std::string dir_;
};

TEST_F(WatchCli, MetricsCsvHasOneHeaderTrainRowsEveryLogStepAndValidationRowsOfTheirOwn) {
  const auto r = sift(train_args("r", " --set train.epochs=2"));
  ASSERT_EQ(r.status, 0) << r;
  const auto lines = lines_of(testing::slurp(dir_ + "/r/metrics.csv"));
  ASSERT_GT(lines.size(), 10u);
  EXPECT_EQ(cells_of(lines[0]), kColumns);
  int train_rows = 0, valid_rows = 0;
  long previous_step = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto c = cells_of(lines[i]);
    ASSERT_EQ(c.size(), kColumns.size()) << lines[i];
    const long step = std::stol(c[0]);
    EXPECT_GE(step, previous_step) << lines[i];
    previous_step = step;
    if (!c[2].empty()) {  // a training row: its own columns, no validation's
      ++train_rows;
      EXPECT_EQ(step % 10, 0) << lines[i];
      EXPECT_GT(std::stod(c[2]), 0.0) << lines[i];              // loss
      EXPECT_GT(std::stod(c[3]), 0.0) << lines[i];              // lr
      EXPECT_GT(std::stod(c[4]), 0.0) << lines[i];              // examples/s
      EXPECT_GT(std::stod(c[5]), std::stod(c[4])) << lines[i];  // tokens/s: several per example
      EXPECT_GT(std::stod(c[6]), 0.0) << lines[i];              // grad norm
      EXPECT_TRUE(c[7].empty()) << lines[i];                    // no loss scaling
      EXPECT_TRUE(c[8].empty() && c[9].empty() && c[10].empty()) << lines[i];
    } else {
      ++valid_rows;
      EXPECT_GT(std::stod(c[8]), 0.9) << lines[i];  // valid accuracy
      EXPECT_TRUE(c[3].empty() && c[4].empty()) << lines[i];
    }
  }
  EXPECT_EQ(valid_rows, 2);   // one per epoch
  EXPECT_GE(train_rows, 25);  // about 157 steps per epoch
}

TEST_F(WatchCli, AResumedRunDropsRowsPastItsCheckpointAndALineCutShort) {
  ASSERT_EQ(sift(train_args("r", " --set train.epochs=1 --set train.max_steps=50")).status, 0);
  const std::string csv = dir_ + "/r/metrics.csv";
  // As if the run had gone on past its last save and been killed mid-row.
  testing::write_file(csv, testing::slurp(csv) + "60,1,0.5,0.4,1,1,1,,,,\n7");
  const auto r = sift("train --resume " + quote(dir_ + "/r") + " --quiet --set train.max_steps=0");
  ASSERT_EQ(r.status, 0) << r;
  const auto lines = lines_of(testing::slurp(csv));
  ASSERT_GT(lines.size(), 10u);
  EXPECT_EQ(cells_of(lines[0]), kColumns);
  std::vector<long> train_steps;
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto c = cells_of(lines[i]);
    ASSERT_EQ(c.size(), kColumns.size()) << lines[i];
    if (!c[2].empty()) train_steps.push_back(std::stol(c[0]));
  }
  for (size_t i = 0; i < train_steps.size(); ++i) {
    EXPECT_EQ(train_steps[i], static_cast<long>(10 * (i + 1))) << "row " << i;
  }
  EXPECT_GE(train_steps.size(), 15u);
}

TEST_F(WatchCli, TensorBoardEventsHoldMetricsCsvsScalarsAsAnIndependentReaderDecodesThem) {
  const auto r = sift(train_args("tb", " --set train.epochs=1 --set train.tensorboard=true"));
  ASSERT_EQ(r.status, 0) << r;
  // Debian's python3-protobuf (tools/setup.sh installs it) with the public field numbers.
  const auto check = testing::run_command(
      "/usr/bin/python3 tests/tools/tensorboard_check.py " + quote(dir_ + "/tb"), dir_, "",
      kSource);
  ASSERT_EQ(check.status, 0) << check;
  EXPECT_NE(check.out.find("tags examples_per_s,grad_norm,lr,tokens_per_s,train_loss,"
                           "valid_accuracy,valid_loss,valid_macro_f1"),
            std::string::npos)
      << check;
}

TEST_F(WatchCli, WithoutTheOptionNoEventFilesAreWritten) {
  ASSERT_EQ(sift(train_args("r", " --set train.epochs=1 --set train.max_steps=20")).status, 0);
  EXPECT_FALSE(fs::exists(dir_ + "/r/tb"));
}

TEST_F(WatchCli, TheReportShowsWhereTheTimeWentPhaseByPhase) {
  ASSERT_EQ(sift(train_args("r", " --set train.epochs=1")).status, 0);
  const auto report = nlohmann::json::parse(testing::slurp(dir_ + "/r/report.json"));
  const auto& phases = report["train"]["phases"];
  std::vector<std::string> names;
  double share = 0.0;
  for (const auto& row : phases["table"]) {
    names.push_back(row["phase"]);
    share += row["share"].get<double>();
    EXPECT_GE(row["seconds"].get<double>(), 0.0);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"data_wait", "copy", "forward", "backward", "allreduce",
                                      "optimizer", "checkpoint", "validation", "other"}));
  EXPECT_NEAR(share, 1.0, 1e-6);
  EXPECT_GT(phases["table"][2]["ms_per_step"].get<double>(), 0.0);  // forward
  EXPECT_GT(phases["table"][6]["seconds"].get<double>(), 0.0);      // the final save
  EXPECT_GT(phases["peak_rss_bytes"].get<int64_t>(), 10 << 20);
  EXPECT_EQ(phases["steps"], report["train"]["steps"]);
  const std::string text = testing::slurp(dir_ + "/r/report.txt");
  EXPECT_NE(text.find("== where the time went"), std::string::npos) << text;
  EXPECT_NE(text.find("peak RSS:"), std::string::npos) << text;
}

TEST_F(WatchCli, TrainProfileTracesTheChosenStepsWithEachPhaseAsANamedRange) {
  const auto r = sift(train_args("r",
                                 " --set train.epochs=1 --set train.profile=true "
                                 "--set train.profile_from=2 --set train.profile_steps=3"));
  ASSERT_EQ(r.status, 0) << r;
  const auto report = nlohmann::json::parse(testing::slurp(dir_ + "/r/report.json"));
  const auto& profile = report["train"]["profile"];
  EXPECT_EQ(profile["first_step"], 2);
  EXPECT_EQ(profile["steps"], 3);
  EXPECT_EQ(profile["trace"], "profile/trace.json");
  // Chrome's trace format: an array of complete ("X") events.
  const auto trace = nlohmann::json::parse(testing::slurp(dir_ + "/r/profile/trace.json"));
  ASSERT_TRUE(trace.is_array());
  std::map<std::string, int> count;
  for (const auto& e : trace) ++count[e["name"].get<std::string>()];
  for (const char* phase : {"data_wait", "copy", "forward", "backward", "optimizer"}) {
    EXPECT_EQ(count[phase], 3) << phase;  // once per recorded step
  }
  EXPECT_GT(count["aten::embedding_bag"] + count["aten::_embedding_bag"], 0);
  EXPECT_NE(testing::slurp(dir_ + "/r/report.txt").find("profile: 3 steps from step 2"),
            std::string::npos);
  EXPECT_NE(testing::slurp(dir_ + "/r/report.html").find("id=\"profile\""), std::string::npos);
}

TEST_F(WatchCli, AProfileWindowPastTheEndOfTheRunRecordsNothingAndSaysSo) {
  const auto r = sift(train_args(
      "r", " --set train.epochs=1 --set train.profile=true --set train.profile_from=1000000"));
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_FALSE(fs::exists(dir_ + "/r/profile"));
  EXPECT_NE(testing::slurp(dir_ + "/r/train.log").find("train.profile: nothing recorded"),
            std::string::npos);
  const auto report = nlohmann::json::parse(testing::slurp(dir_ + "/r/report.json"));
  EXPECT_TRUE(report["train"]["profile"].is_null());
}

TEST_F(WatchCli, TheReportHoldsAReliabilityDiagramAndTheMostConfusedPairs) {
  ASSERT_EQ(sift(train_args("r", " --set train.epochs=1")).status, 0);
  const auto report = nlohmann::json::parse(testing::slurp(dir_ + "/r/report.json"));
  const auto& calibration = report["splits"]["valid"]["calibration"];
  int64_t examples = 0;
  for (const auto& bin : calibration["bins"]) examples += bin["examples"].get<int64_t>();
  EXPECT_EQ(examples, report["splits"]["valid"]["examples"].get<int64_t>());
  EXPECT_GE(calibration["ece"].get<double>(), 0.0);
  EXPECT_LE(calibration["ece"].get<double>(), 1.0);
  const std::string html = testing::slurp(dir_ + "/r/report.html");
  EXPECT_NE(html.find("id=\"reliability\""), std::string::npos);
  EXPECT_NE(html.find("class=\"bin\""), std::string::npos);
  const auto& m = report["splits"]["valid"]["confusion"];
  const bool mistakes = m[0][1].get<int64_t>() + m[1][0].get<int64_t>() > 0;
  EXPECT_EQ(html.find("id=\"confused\"") != std::string::npos, mistakes);
}

// What a page must never hold: a script, or anything fetched over the network.
void expect_self_contained(const std::string& html) {
  EXPECT_EQ(html.find("<script"), std::string::npos);
  for (const char* link : {"src=", "href=", "url(", "@import", "https://"}) {
    EXPECT_EQ(html.find(link), std::string::npos) << link;
  }
}

TEST_F(WatchCli, ARunWritesASelfContainedHtmlReportWithItsMainParts) {
  ASSERT_EQ(sift(train_args("r", " --set train.epochs=2")).status, 0);
  const std::string html = testing::slurp(dir_ + "/r/report.html");
  for (const char* part :
       {"<h1>Sift run r</h1>", "id=\"summary\"", "id=\"curves\"", "training loss",
        "validation accuracy", "learning rate", "examples per second", "id=\"confusion\"",
        "class=\"cell\"", "id=\"per-class\"", "<td>spam</td>", "id=\"phases\"", "data_wait",
        "id=\"environment\"", "libtorch", "id=\"config\"", "sms_spam", "<polyline"}) {
    EXPECT_NE(html.find(part), std::string::npos) << part;
  }
  expect_self_contained(html);
}

TEST_F(WatchCli, ReportComparesSeveralRunsSideBySide) {
  ASSERT_EQ(sift(train_args("a", " --set train.epochs=1")).status, 0);
  ASSERT_EQ(sift(train_args("b", " --set train.epochs=2")).status, 0);
  const auto r = sift("report " + quote(dir_ + "/a") + " " + quote(dir_ + "/b") + " --out " +
                      quote(dir_ + "/page.html"));
  ASSERT_EQ(r.status, 0) << r;
  const std::string html = testing::slurp(dir_ + "/page.html");
  EXPECT_NE(html.find("<h1>Sift: 2 runs</h1>"), std::string::npos);
  EXPECT_NE(html.find("<tr><td>a</td>"), std::string::npos);
  EXPECT_NE(html.find("<tr><td>b</td>"), std::string::npos);
  EXPECT_NE(html.find("accuracy against training time"), std::string::npos);
  // Overlaid: the training loss chart has one line per run.
  const size_t chart = html.find("training loss");
  ASSERT_NE(chart, std::string::npos);
  const size_t end = html.find("</figure>", chart);
  int lines = 0;
  for (size_t at = chart; (at = html.find("<polyline", at + 1)) < end;) ++lines;
  EXPECT_EQ(lines, 2);
  expect_self_contained(html);
}

TEST_F(WatchCli, ReportSurvivesACutMetricsCsvABrokenReportJsonAndAnOldRunFolder) {
  ASSERT_EQ(sift(train_args("r", " --set train.epochs=1")).status, 0);
  fs::copy(dir_ + "/r", dir_ + "/cut", fs::copy_options::recursive);
  fs::copy(dir_ + "/r", dir_ + "/old", fs::copy_options::recursive);
  const std::string csv = testing::slurp(dir_ + "/r/metrics.csv");
  testing::write_file(dir_ + "/cut/metrics.csv", csv.substr(0, csv.size() / 2 + 3));  // mid-row
  testing::write_file(dir_ + "/cut/report.json", "{\"train\": {\"steps\": 1");        // mid-write
  fs::remove(dir_ + "/old/metrics.csv");  // a run folder from before metrics.csv
  const auto r = sift("report " + quote(dir_ + "/cut") + " " + quote(dir_ + "/old") + " --out " +
                      quote(dir_ + "/page.html"));
  ASSERT_EQ(r.status, 0) << r;
  const std::string html = testing::slurp(dir_ + "/page.html");
  EXPECT_NE(html.find("report.json is not valid JSON"), std::string::npos);
  EXPECT_NE(html.find("no metrics.csv"), std::string::npos);
  EXPECT_NE(html.find("<polyline"), std::string::npos);  // the cut file's complete rows
  const auto single = sift("report " + quote(dir_ + "/old"));
  ASSERT_EQ(single.status, 0) << single;
  EXPECT_NE(single.out.find("id=\"confusion\""), std::string::npos);
}

TEST_F(WatchCli, ReportOfAFolderThatIsNoRunIsOneCleanError) {
  EXPECT_TRUE(
      testing::CleanSiftError(sift("report " + quote(dir_)), {dir_, "is not a run folder"}));
}

// Rendered by a real browser (Debian's chromium, installed by tools/setup.sh): the page
// loads from disk with no console error (its Content-Security-Policy allows no request,
// so any fetch would be logged as one) and the main elements are in the rendered DOM.
TEST_F(WatchCli, HeadlessChromiumRendersTheReportWithoutConsoleErrors) {
  ASSERT_EQ(sift(train_args("r", " --set train.epochs=2")).status, 0);
  const std::string page = dir_ + "/r/report.html";
  const auto dom = testing::headless_chromium(page, "--dump-dom", dir_);
  ASSERT_EQ(dom.status, 0) << dom;
  for (const char* part : {"id=\"curves\"", "id=\"confusion\"", "id=\"per-class\"", "id=\"phases\"",
                           "<polyline", "<rect class=\"cell\""}) {
    EXPECT_NE(dom.out.find(part), std::string::npos) << part;
  }
  EXPECT_EQ(dom.err.find("CONSOLE"), std::string::npos) << dom.err;
  EXPECT_EQ(dom.err.find("Content Security Policy"), std::string::npos) << dom.err;
  const auto shot = testing::headless_chromium(
      page, "--window-size=1300,2400 --screenshot=" + quote(dir_ + "/shot.png"), dir_);
  ASSERT_EQ(shot.status, 0) << shot;
  EXPECT_GT(fs::file_size(dir_ + "/shot.png"), 10000u);
}

}  // namespace
}  // namespace sift
