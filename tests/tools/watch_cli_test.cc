// Watching a run: metrics.csv (per-step rows in Lightning's CSVLogger layout), the phase
// profile in report.json/report.txt, driven through the `sift` executable.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "datasets/example_stream.h"
#include "datasets/unicode.h"
#include "run_sift.h"

namespace sift {
namespace watch_cli_test {

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
  testing::SiftResult sift(const std::string& args, const std::string& input = "") {
    return testing::run_sift(args, dir_, input, kSource);
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

// Issue #42: the first metrics.csv row after a resume averaged only the steps since the
// resume, so its train_loss differed from the uninterrupted run's; last.ckpt now keeps the
// row in progress. Rows every 7 steps, a constant learning rate (so one epoch resumed to
// two trains as two do), a stop at the first epoch's end (157 steps): the row at 161
// spans the stop.
TEST_F(WatchCli, TheFirstRowAfterAResumeSaysWhatTheUninterruptedRunsSays) {
  const std::string exact =
      " --set train.log_every=7 --set run.threads=1 --set data.workers=1"
      " --set train.scheduler.type=constant";
  ASSERT_EQ(sift(train_args("u", exact + " --set train.epochs=2")).status, 0);
  ASSERT_EQ(sift(train_args("s", exact + " --set train.epochs=1")).status, 0);
  const auto r = sift("train --resume " + quote(dir_ + "/s") + " --quiet --set train.epochs=2");
  ASSERT_EQ(r.status, 0) << r;
  auto losses = [&](const std::string& run) {
    std::map<long, std::string> by_step;
    const auto lines = lines_of(testing::slurp(dir_ + "/" + run + "/metrics.csv"));
    for (size_t i = 1; i < lines.size(); ++i) {
      const auto c = cells_of(lines[i]);
      if (!c[2].empty()) by_step[std::stol(c[0])] = c[2];
    }
    return by_step;
  };
  const auto u = losses("u"), s = losses("s");
  ASSERT_TRUE(u.count(161) && s.count(161)) << "no row at step 161";
  EXPECT_EQ(s.at(161), u.at(161));
  size_t compared = 0;
  for (const auto& [step, loss] : s) {
    ASSERT_TRUE(u.count(step)) << step;
    EXPECT_EQ(loss, u.at(step)) << "step " << step;
    ++compared;
  }
  EXPECT_GT(compared, 40u);
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

TEST_F(WatchCli, EachValidationWritesItsConfusionMatrixAsATextSummaryThatMatchesTheReport) {
  const auto r = sift(train_args("tb", " --set train.epochs=2 --set train.tensorboard=true"));
  ASSERT_EQ(r.status, 0) << r;
  // The script checks each matrix against metrics.csv's validation steps and report.json.
  const auto check = testing::run_command(
      "/usr/bin/python3 tests/tools/tensorboard_check.py " + quote(dir_ + "/tb"), dir_, "",
      kSource);
  ASSERT_EQ(check.status, 0) << check;
  EXPECT_NE(check.out.find("; 2 confusion matrices"), std::string::npos) << check;
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

TEST_F(WatchCli, AFastPathRunTimesItsFusedStepSoItsComputeIsNotOther) {
  ASSERT_EQ(sift(train_args("r", " --set train.epochs=1 --set train.fast_path=auto")).status, 0);
  const auto report = nlohmann::json::parse(testing::slurp(dir_ + "/r/report.json"));
  const auto& phases = report["train"]["phases"];
  std::map<std::string, double> seconds;
  for (const auto& row : phases["table"]) seconds[row["phase"]] = row["seconds"].get<double>();
  ASSERT_EQ(seconds.count("fused"), 1u) << phases.dump();
  EXPECT_GT(seconds["fused"], 0.0);
  EXPECT_EQ(seconds["forward"], 0.0);  // no autograd step ran
  EXPECT_LT(phases["data_wait_share_of_step"].get<double>(), 1.0);
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

// A record's text as the report shows it: control characters (C0, DEL, C1) as spaces and
// bytes that are not UTF-8 as U+FFFD. SMS spam has one: U+0093 in the INTERFLORA text.
std::string as_shown(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const Utf8Char c = decode_utf8(text, i);
    if (c.cp < 0) {
      out += "\xEF\xBF\xBD";
    } else if (c.cp < 0x20 || c.cp == 0x7f || (c.cp >= 0x80 && c.cp < 0xa0)) {
      out += ' ';
    } else {
      out.append(text, i, c.length);
    }
    i += c.length;
  }
  return out;
}

struct Record {
  std::string text, label;
};

// The validation part of SMS spam as a run with data.valid_split 0.1 and `seed` holds it
// out, read through the datasets layer: shown text -> the record.
std::map<std::string, Record> sms_validation_part(uint64_t seed) {
  TextFormat format;
  format.format = FileFormat::tsv;
  format.text_columns = {"1"};
  format.label_column = "0";
  ExampleStream valid({kSource + "/data/sms_spam/SMSSpamCollection"}, format, {}, HashPart::valid,
                      0.1, seed);
  std::map<std::string, Record> part;
  for (Example e; valid.next(e);) part[as_shown(e.text)] = {e.text, e.labels.at(0)};
  return part;
}

const std::string kEllipsis = "\xE2\x80\xA6";

TEST_F(WatchCli, TheMostConfusedPairsShowValidationTextsOfTheirTrueLabelThatTheModelMisreads) {
  // Few steps: a model that still errs. Two data workers: texts travel with their records.
  ASSERT_EQ(sift(train_args("r",
                            " --set train.epochs=1 --set train.max_steps=12 "
                            "--set data.workers=2 --set run.seed=3"))
                .status,
            0);
  const auto report = nlohmann::json::parse(testing::slurp(dir_ + "/r/report.json"));
  const auto& valid = report["splits"]["valid"];
  const auto& pairs = valid["confused_examples"];
  const auto labels = report["labels"].get<std::vector<std::string>>();
  ASSERT_FALSE(pairs.empty()) << valid.dump();
  const auto part = sms_validation_part(3);
  std::string whole, expected;  // texts shown whole, and what the model predicts for them
  size_t shown = 0;
  for (const auto& pair : pairs) {
    const std::string truth = pair["true"].get<std::string>();
    const auto index = [&](const std::string& label) {
      return static_cast<size_t>(std::find(labels.begin(), labels.end(), label) - labels.begin());
    };
    const int64_t count =
        valid["confusion"][index(truth)][index(pair["predicted"].get<std::string>())]
            .get<int64_t>();
    EXPECT_EQ(pair["count"].get<int64_t>(), count);
    ASSERT_EQ(pair["texts"].size(), static_cast<size_t>(std::min<int64_t>(count, 3)));
    for (const auto& text_json : pair["texts"]) {
      std::string text = text_json.get<std::string>();
      ++shown;
      const bool cut =
          text.size() > kEllipsis.size() && text.compare(text.size() - 3, 3, kEllipsis) == 0;
      if (cut) text.resize(text.size() - 3);
      const auto it = part.lower_bound(text);  // a cut text is a prefix of its record's
      ASSERT_TRUE(it != part.end() && it->first.compare(0, text.size(), text) == 0) << text;
      EXPECT_EQ(it->second.label, truth) << text;
      if (cut) continue;
      EXPECT_EQ(it->first, text);
      whole += it->second.text + "\n";  // the record itself, as the model read it
      expected += pair["predicted"].get<std::string>() + "\n";
    }
  }
  // The run's model (its best weights, as evaluated) reads them as the pair says.
  const auto predicted = sift("predict --model " + quote(dir_ + "/r"), whole);
  ASSERT_EQ(predicted.status, 0) << predicted;
  std::string labels_out;
  for (const auto& line : lines_of(predicted.out))
    labels_out += line.substr(0, line.find('\t')) + "\n";
  EXPECT_EQ(labels_out, expected);
  const std::string text = testing::slurp(dir_ + "/r/report.txt");
  EXPECT_NE(text.find("most confused pairs"), std::string::npos) << text;
  EXPECT_NE(text.find("    " + pairs[0]["texts"][0].get<std::string>() + "\n"), std::string::npos);
  const std::string html = testing::slurp(dir_ + "/r/report.html");
  EXPECT_NE(html.find("Most confused pairs on the valid split"), std::string::npos);
  size_t items = 0;
  for (size_t at = html.find("id=\"confused\"");
       (at = html.find("<li>", at + 1)) != std::string::npos;)
    ++items;
  EXPECT_EQ(items, shown);
}

TEST_F(WatchCli, ConfusedTextsFromAValidationFileAreCutToTwoHundredCharactersAndEscaped) {
  std::string train;
  for (int i = 0; i < 100; ++i)
    train += "pos\tsunny bright happy day\nneg\tgloomy dark sad night\n";
  std::string long_text;
  while (long_text.size() < 300) long_text += "gloomy dark ";
  testing::write_file(dir_ + "/train.tsv", train);
  // Mislabelled "pos": its known words and their bigrams all come from "neg" lines, so
  // every seed's model calls it neg ("gloomy <b>dark</b> & sad" was called pos by some:
  // its unknown tokens' bigram buckets are untrained rows).
  testing::write_file(dir_ + "/valid.tsv", "pos\tgloomy dark sad night & <b>sad</b>\npos\t" +
                                               long_text + "\nneg\tgloomy dark sad night\n");
  const auto r = sift(train_args("r",
                                 " --set train.epochs=3 --set data.valid_split=0 "
                                 "--set data.train.path=" +
                                     quote(dir_ + "/train.tsv") +
                                     " --set data.valid.path=" + quote(dir_ + "/valid.tsv")));
  ASSERT_EQ(r.status, 0) << r;
  const auto report = nlohmann::json::parse(testing::slurp(dir_ + "/r/report.json"));
  const auto& pairs = report["splits"]["valid"]["confused_examples"];
  ASSERT_EQ(pairs.size(), 1u) << report["splits"]["valid"].dump();
  EXPECT_EQ(pairs[0]["true"], "pos");
  EXPECT_EQ(pairs[0]["predicted"], "neg");
  auto texts = pairs[0]["texts"].get<std::vector<std::string>>();
  std::sort(texts.begin(), texts.end());
  EXPECT_EQ(texts, (std::vector<std::string>{long_text.substr(0, 200) + kEllipsis,
                                             "gloomy dark sad night & <b>sad</b>"}));
  const std::string html = testing::slurp(dir_ + "/r/report.html");
  EXPECT_NE(html.find("<li>gloomy dark sad night &amp; &lt;b&gt;sad&lt;/b&gt;</li>"),
            std::string::npos);
  EXPECT_EQ(html.find("<b>dark"), std::string::npos);
  expect_self_contained(html);
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

// The page names the split of every figure, draws both losses on one chart, labels both
// axes of the confusion matrix with counts readable on their shade, ticks at round values,
// leaves out a flat chart, and records where the run came from (report.json too); it
// renders in headless Chromium at 1280 and 800 px.
TEST_F(WatchCli, TheReportNamesItsSplitsDrawsBothLossesTogetherAndRecordsItsProvenance) {
  ASSERT_EQ(
      sift(train_args("r", " --set train.epochs=2 --set train.scheduler.type=constant")).status, 0);
  const std::string html = testing::slurp(dir_ + "/r/report.html");
  for (const char* part :
       {"Confusion matrix on the valid split", "Per class on the valid split",
        "Reliability on the valid split", "Most confused pairs on the valid split",
        "predicted label", "true label", "learning rate: 0.5 throughout"}) {
    EXPECT_NE(html.find(part), std::string::npos) << part;
  }
  EXPECT_EQ(html.find("<figcaption>learning rate"), std::string::npos);  // flat: no panel
  const size_t chart = html.find("training loss (lines) and validation loss (markers)");
  ASSERT_NE(chart, std::string::npos);
  const std::string figure = html.substr(chart, html.find("</figure>", chart) - chart);
  EXPECT_NE(figure.find("<polyline"), std::string::npos);
  EXPECT_NE(figure.find("<circle"), std::string::npos);
  EXPECT_EQ(html.find("validation loss</figcaption>"), std::string::npos);
  // Column labels for both labels, and the ham row's diagonal (most of the row, the
  // darkest blue) counted in white.
  size_t columns = 0;
  for (size_t at = html.find("class=\"tick col\""); at != std::string::npos;
       at = html.find("class=\"tick col\"", at + 1)) {
    ++columns;
  }
  EXPECT_EQ(columns, 2u);
  EXPECT_NE(html.find("class=\"count\" text-anchor=\"middle\" fill=\"#fff\""), std::string::npos);
  EXPECT_EQ(html.find("e+0"), std::string::npos);  // no tick in exponent form
  const auto env = nlohmann::json::parse(testing::slurp(dir_ + "/r/report.json"))["environment"];
  EXPECT_EQ(env["sift_version"], "0.1.0");
  EXPECT_FALSE(env["git_commit"].get<std::string>().empty());
  EXPECT_NE(env["command_line"].get<std::string>().find("train configs/sms_spam.yaml"),
            std::string::npos);
  EXPECT_TRUE(std::regex_match(env["started"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  EXPECT_TRUE(
      std::regex_match(env["config_hash"].get<std::string>(), std::regex("crc32:[0-9a-f]{8}")));
  EXPECT_NE(html.find("git_commit"), std::string::npos);
  for (const char* width : {"1280", "800"}) {
    const std::string shot = dir_ + "/shot_" + width + ".png";
    const auto r = testing::headless_chromium(
        dir_ + "/r/report.html",
        "--screenshot=" + quote(shot) + " --window-size=" + width + ",2400", dir_);
    ASSERT_EQ(r.status, 0) << r;
    EXPECT_GT(fs::file_size(shot), 10000u) << width;
    const std::string wide =
        testing::elements_past_the_edge(dir_ + "/r/report.html", std::stoi(width), dir_);
    EXPECT_EQ(wide.find(' '), std::string::npos) << width << " px: " << wide;
  }
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
  for (const int width : {1280, 800}) {
    const std::string wide = testing::elements_past_the_edge(dir_ + "/page.html", width, dir_);
    EXPECT_EQ(wide.find(' '), std::string::npos) << width << " px: " << wide;
  }
  // Issue #38: the options that differ, one row each (train.epochs: 1 against 2; the
  // options both share are not listed).
  const size_t diff = html.find("<table id=\"config-diff\">");
  ASSERT_NE(diff, std::string::npos);
  const std::string table = html.substr(diff, html.find("</table>", diff) - diff);
  EXPECT_NE(table.find("<tr><td>train.epochs</td><td>1</td><td>2</td></tr>"), std::string::npos)
      << table;
  EXPECT_EQ(table.find("model.dim"), std::string::npos) << table;
  EXPECT_NE(html.find("Curves by step</h2>"), std::string::npos);
}

// `sift report --x epochs|time` (issue #38): runs of different lengths on one scale. The
// x axis is named, and with epochs the validations at the ends of epochs sit at 1 and 2.
TEST_F(WatchCli, ReportPlotsRunsAgainstEpochsOrTrainingTime) {
  ASSERT_EQ(sift(train_args("a", " --set train.epochs=1")).status, 0);
  ASSERT_EQ(sift(train_args("b", " --set train.epochs=2")).status, 0);
  const std::string runs = quote(dir_ + "/a") + " " + quote(dir_ + "/b");
  const auto epochs = sift("report " + runs + " --x epochs");
  ASSERT_EQ(epochs.status, 0) << epochs;
  EXPECT_NE(epochs.out.find("Curves by epoch</h2>"), std::string::npos);
  const size_t chart = epochs.out.find("training loss (lines)");
  ASSERT_NE(chart, std::string::npos);
  const std::string svg = epochs.out.substr(chart, epochs.out.find("</figure>", chart) - chart);
  EXPECT_NE(svg.find(">epoch</text>"), std::string::npos) << svg;
  // Each epoch's validation at its epoch (the step axis put them at steps 157 and 314).
  EXPECT_NE(svg.find("<title>a validation (1, "), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>b validation (2, "), std::string::npos) << svg;
  const auto time = sift("report " + runs + " --x time");
  ASSERT_EQ(time.status, 0) << time;
  EXPECT_NE(time.out.find("Curves by training seconds</h2>"), std::string::npos);
  EXPECT_TRUE(
      testing::CleanSiftError(sift("report " + runs + " --x hours"), {"--x hours", "epochs"}));
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

TEST_F(WatchCli, AReportJsonFromBeforeTheProfilerStillGivesAPageOfWhatItHas) {
  ASSERT_EQ(sift(train_args("r", " --set train.epochs=1 --set train.max_steps=12")).status, 0);
  auto report = nlohmann::json::parse(testing::slurp(dir_ + "/r/report.json"));
  // What a run before issue #16 wrote: no phases, calibration or confused texts.
  report["train"].erase("phases");
  report["train"].erase("profile");
  report.erase("environment");
  for (auto& split : report["splits"]) {
    split.erase("calibration");
    split.erase("confused_examples");
  }
  testing::write_file(dir_ + "/r/report.json", report.dump(2));
  fs::remove(dir_ + "/r/metrics.csv");
  const auto r = sift("report " + quote(dir_ + "/r"));
  ASSERT_EQ(r.status, 0) << r;
  for (const char* part : {"id=\"summary\"", "id=\"confusion\"", "id=\"per-class\"",
                           "id=\"split-figures\"", "no metrics.csv", "id=\"config\""}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part;
  }
  for (const char* part : {"id=\"phases\"", "id=\"reliability\"", "id=\"environment\"", "<li>"}) {
    EXPECT_EQ(r.out.find(part), std::string::npos) << part;
  }
  // The confused pairs, from the matrix alone: as many as its off-diagonal cells that are not 0.
  const auto& m = report["splits"]["valid"]["confusion"];
  const int mistakes = (m[0][1].get<int64_t>() > 0) + (m[1][0].get<int64_t>() > 0);
  ASSERT_GT(mistakes, 0);
  const size_t table = r.out.find("id=\"confused\"");
  ASSERT_NE(table, std::string::npos);
  int rows = 0;
  for (size_t at = table; (at = r.out.find("<tr><td>", at + 1)) < r.out.find("</table>", table);)
    ++rows;
  EXPECT_EQ(rows, mistakes);
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

}  // namespace watch_cli_test
}  // namespace sift
