// `sift predict` of a fastText run folder or fp32/pq export runs sift-lite, without
// LibTorch: its lines against sift-main's (SIFT_LITE=0) for each loss, single- and
// multi-label, sparse and dense tables, pq exports with and without --cutoff and --qnorm,
// --top-k, --threshold and --json; what it hands to sift-main.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "run_sift.h"

namespace sift {
namespace lite_predict_cli_test {

namespace fs = std::filesystem;
using testing::CleanSiftError;
using testing::lines_of;
using testing::quote;
using Result = testing::SiftResult;
using testing::operator<<;

const std::string kSource = SIFT_SOURCE_DIR;
const std::string kTrec = kSource + "/tests/data/trec/";

// (label, score) of every prediction of a --json line.
std::vector<std::pair<std::string, double>> predictions_of(const std::string& line) {
  std::vector<std::pair<std::string, double>> out;
  const nlohmann::json j = nlohmann::json::parse(line);
  for (const auto& p : j.at("predictions")) {
    out.emplace_back(p.at("label").get<std::string>(), p.at("score").get<double>());
  }
  return out;
}

class LitePredictCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::make_temp_dir("sift_lite");
    // The test questions as they come (label first): predict drops __label__ tokens
    // only, so the label number is read as a word, alike on both paths. Then an empty
    // line and one of spaces: no ids, the output layer's bias alone.
    testing::write_file(dir_ + "/texts.txt",
                        testing::slurp(kTrec + "TREC.test.sample") + "\n   \n");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Result sift(const std::string& args, const std::string& env = "") {
    return testing::run_command(env + " " + quote(SIFT_BINARY) + " " + args, dir_, "", kSource);
  }
  // configs/trec.yaml on the fixture; `sets` adds --set assignments.
  std::string train(const std::string& name, const std::string& sets) {
    const Result r = sift("train configs/trec.yaml --quiet --set run.dir=" + quote(dir_) +
                          " --set run.name=" + name +
                          " --set data.train.path=" + quote(kTrec + "TREC.train.sample") +
                          " --set data.test.path=" + quote(kTrec + "TREC.test.sample") +
                          " --set train.epochs=5 " + sets);
    EXPECT_EQ(r.status, 0) << r;
    return dir_ + "/" + name;
  }
  // sift-lite's and sift-main's predict of `run` with `options`: the same labels in the
  // same order on every line, scores within float rounding (the output layer's sums run
  // in another order). sift-lite must have served it: SIFT_LITE_WHY says nothing.
  void expect_alike(const std::string& run, const std::string& options) {
    const std::string args =
        "predict --model " + quote(run) + " --input " + quote(dir_ + "/texts.txt") + " " + options;
    const Result lite = sift(args + " --json", "SIFT_LITE_WHY=1");
    const Result main = sift(args + " --json", "SIFT_LITE=0");
    ASSERT_EQ(lite.status, 0) << lite;
    ASSERT_EQ(main.status, 0) << main;
    EXPECT_EQ(lite.err, "");
    const auto a = lines_of(lite.out), b = lines_of(main.out);
    ASSERT_EQ(a.size(), 102u);
    ASSERT_EQ(b.size(), a.size());
    size_t printed = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(nlohmann::json::parse(a[i])["text"], nlohmann::json::parse(b[i])["text"]);
      const auto x = predictions_of(a[i]), y = predictions_of(b[i]);
      ASSERT_EQ(x.size(), y.size()) << options << "\n" << a[i] << "\n" << b[i];
      for (size_t k = 0; k < x.size(); ++k) {
        EXPECT_EQ(x[k].first, y[k].first) << options << " line " << i + 1;
        EXPECT_NEAR(x[k].second, y[k].second, 1e-6) << options << " line " << i + 1;
      }
      printed += x.size();
    }
    EXPECT_GT(printed, 0u) << options;
  }
  std::string dir_;
};

TEST_F(LitePredictCli, EachLossPredictsAsSiftMainDoes) {
  for (const std::string loss : {"softmax", "hs", "ns", "ova"}) {
    SCOPED_TRACE(loss);
    const std::string run = train(loss, "--set train.loss=" + loss);
    expect_alike(run, "");
    expect_alike(run, "--top-k 6");
    expect_alike(run, "--top-k 3 --threshold 0.2");
  }
}

TEST_F(LitePredictCli, ATableStoredWholePredictsAsOneStoredAsChangedRows) {
  // 2,000 buckets: training changes most rows, so the checkpoint holds the whole table;
  // 200,000: a few thousand changed rows beside the fill.
  for (const std::string buckets : {"2000", "200000"}) {
    expect_alike(train("b" + buckets, "--set model.buckets=" + buckets), "--top-k 6");
  }
}

TEST_F(LitePredictCli, TheRunsOwnStopWordsNgramsAndBestWeightsAreUsed) {
  // A validation split too: the weights come from best.ckpt.
  const std::string run = train("sw",
                                "--set tokenizer.stopwords=english --set model.ngrams=3 "
                                "--set data.valid_split=0.2");
  ASSERT_TRUE(fs::exists(run + "/best.ckpt"));
  expect_alike(run, "--top-k 6");
}

TEST_F(LitePredictCli, AMultiLabelRunPrintsTheLabelsOverItsThreshold) {
  const std::string run = train("ml", "--set data.multi_label=true --set train.threshold=0.3");
  expect_alike(run, "");
  expect_alike(run, "--threshold 0.05");
}

TEST_F(LitePredictCli, Fp32AndProductQuantizedExportsPredictAsSiftMainDoes) {
  // hs: the export's forward (sift-main) walks its tree level by level; sift-lite searches
  // the tree of the export's label counts, as it does a run folder's.
  for (const std::string loss : {"softmax", "hs"}) {
    const std::string run = train(loss, "--set model.buckets=20000 --set train.loss=" + loss);
    for (const std::string options :
         {"", "--quantize pq --qnorm", "--quantize pq --cutoff 3000 --qnorm",
          "--quantize pq --cutoff 3000"}) {
      SCOPED_TRACE(loss + " " + options);
      const std::string model = dir_ + "/" + loss + ".pt";
      fs::remove(model);
      const Result exported =
          sift("export " + quote(run) + " --out " + quote(model) + " " + options);
      ASSERT_EQ(exported.status, 0) << exported;
      expect_alike(model, "--top-k 6");
    }
  }
  expect_alike(dir_ + "/hs.pt", "--top-k 3 --threshold 0.2");
}

TEST_F(LitePredictCli, WhatItDoesNotReadGoesToSiftMain) {
  const std::string run = train("r", "");
  const std::string model = dir_ + "/r.pt";
  ASSERT_EQ(sift("export " + quote(run) + " --out " + quote(model) + " --quantize int8").status, 0);
  const std::string args =
      "predict --model " + quote(model) + " --input " + quote(dir_ + "/texts.txt") + " --top-k 2";
  const Result lite = sift(args, "SIFT_LITE_WHY=1");
  const Result main = sift(args, "SIFT_LITE=0");
  ASSERT_EQ(lite.status, 0) << lite;
  EXPECT_EQ(lite.out, main.out);
  EXPECT_NE(lite.err.find("sift-main predict: a fasttext export, --quantize int8"),
            std::string::npos)
      << lite;
  // An export changed after it was written: sift-main's one error line, naming the file.
  const std::string fp32 = dir_ + "/fp32.pt";
  ASSERT_EQ(sift("export " + quote(run) + " --out " + quote(fp32)).status, 0);
  {
    std::fstream f(fp32, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(fp32) / 2));
    f.put('\x5a');
  }
  EXPECT_TRUE(CleanSiftError(
      sift("predict --model " + quote(fp32) + " --input " + quote(dir_ + "/texts.txt")),
      {"fp32.pt"}));
  // A damaged checkpoint: sift-main's one error line, naming the file.
  {
    std::fstream f(run + "/last.ckpt", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x5a');
  }
  EXPECT_TRUE(CleanSiftError(
      sift("predict --model " + quote(run) + " --input " + quote(dir_ + "/texts.txt")),
      {"last.ckpt", "corrupted checkpoint"}));
}

TEST_F(LitePredictCli, TheSiftProgramLoadsNoLibTorch) {
  const Result libraries = testing::run_command("ldd " + quote(SIFT_BINARY), dir_);
  ASSERT_EQ(libraries.status, 0) << libraries;
  EXPECT_NE(libraries.out.find("libc.so"), std::string::npos) << libraries;
  for (const char* torch : {"libtorch", "libc10", "libgomp"}) {
    EXPECT_EQ(libraries.out.find(torch), std::string::npos) << torch << "\n" << libraries;
  }
}

TEST_F(LitePredictCli, ErrorsWhilePredictingAreOneLine) {
  const std::string run = train("r", "");
  EXPECT_TRUE(CleanSiftError(sift("predict --model " + quote(run) + " --input missing.txt"),
                             {"cannot open missing.txt"}));
  EXPECT_TRUE(CleanSiftError(sift("predict --model " + quote(run) + " --top-k 0"), {"--top-k"}));
  EXPECT_TRUE(
      CleanSiftError(sift("predict --model " + quote(run) + " --threshold 2"), {"--threshold"}));
}

}  // namespace lite_predict_cli_test
}  // namespace sift
