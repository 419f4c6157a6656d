// train.loss hs, ns and ova end to end on the TREC fixture (6 labels): train on either
// path, predict from the run folder (hs: the tree search), from its export and from
// Python's torch.jit.load (examples/classify.py); eval; the refusals.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "run_sift.h"

namespace sift {
namespace losses_cli_test {

namespace fs = std::filesystem;
using testing::CleanSiftError;
using testing::lines_of;
using testing::quote;
using Result = testing::SiftResult;
using testing::operator<<;

const std::string kSource = SIFT_SOURCE_DIR;
const std::string kTrec = kSource + "/tests/data/trec/";

class LossesCli : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = testing::make_temp_dir("sift_losses");
    // The ASCII test questions without their labels: what predict reads (Python and C++
    // read other bytes alike too, but the fixture's Latin-1 is not the point here).
    std::ifstream in(kTrec + "TREC.test.sample", std::ios::binary);
    std::string line, texts;
    while (std::getline(in, line)) {
      bool ascii = true;
      for (const char c : line) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
      if (ascii) texts += line.substr(line.find(' ') + 1) + "\n";
    }
    testing::write_file(dir_ + "/texts.txt", texts);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Result sift(const std::string& args) { return testing::run_sift(args, dir_, "", kSource); }
  // configs/trec.yaml on the fixture, with train.loss set to the test's loss (batches of
  // 16, as the tests were written for: the config's 1 would give the autograd runs 16x the
  // steps).
  Result train(const std::string& name, const std::string& sets = "") {
    return sift("train configs/trec.yaml --quiet --json --set run.dir=" + quote(dir_) +
                " --set run.name=" + name +
                " --set data.train.path=" + quote(kTrec + "TREC.train.sample") +
                " --set data.test.path=" + quote(kTrec + "TREC.test.sample") +
                " --set model.buckets=50000 --set train.epochs=10 --set train.batch_size=16" +
                " --set train.loss=" + GetParam() + " " + sets);
  }
  std::string dir_;
};

// Label<TAB>probability pairs of one line of `predict` or classify.py.
std::vector<std::pair<std::string, double>> pairs_of(const std::string& line) {
  std::vector<std::string> f;
  std::stringstream in(line);
  for (std::string s; std::getline(in, s, '\t');) f.push_back(s);
  std::vector<std::pair<std::string, double>> out;
  for (size_t i = 0; i + 1 < f.size(); i += 2) out.emplace_back(f[i], std::stod(f[i + 1]));
  return out;
}

TEST_P(LossesCli, TrainsOnEitherPathAndLearns) {
  for (const std::string path : {"auto", "off"}) {
    const Result r = train("r-" + path, "--set train.fast_path=" + path);
    ASSERT_EQ(r.status, 0) << r;
    const auto summary = nlohmann::json::parse(r.out);
    const std::string taken = summary["train"]["training_path"].get<std::string>();
    EXPECT_EQ(taken.rfind("fast path", 0) == 0, path == "auto") << taken;
    // Six classes (chance about 0.2); 600 training questions.
    EXPECT_GT(summary["splits"]["test"]["accuracy"].get<double>(), 0.45) << GetParam() << r.out;
  }
}

TEST_P(LossesCli, RunFolderExportAndPythonPredictAlike) {
  ASSERT_EQ(train("r").status, 0);
  const std::string run = dir_ + "/r", model = dir_ + "/r.pt";
  const Result exported = sift("export " + quote(run) + " --out " + quote(model));
  ASSERT_EQ(exported.status, 0) << exported;
  const std::string texts = quote(dir_ + "/texts.txt");
  const Result from_run =
      sift("predict --model " + quote(run) + " --input " + texts + " --top-k 6");
  const Result from_file =
      sift("predict --model " + quote(model) + " --input " + texts + " --top-k 6");
  const Result python = testing::run_command(
      "/usr/bin/python3 examples/classify.py " + quote(model) + " " + texts + " --top-k 6", dir_,
      "", kSource);
  ASSERT_EQ(from_run.status, 0) << from_run;
  ASSERT_EQ(from_file.status, 0) << from_file;
  ASSERT_EQ(python.status, 0) << python;
  const auto a = lines_of(from_run.out), b = lines_of(from_file.out), c = lines_of(python.out);
  ASSERT_GT(a.size(), 80u);
  ASSERT_EQ(b.size(), a.size());
  ASSERT_EQ(c.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const auto x = pairs_of(a[i]), y = pairs_of(b[i]), z = pairs_of(c[i]);
    ASSERT_EQ(x.size(), 6u) << a[i];
    ASSERT_EQ(y.size(), 6u) << b[i];
    ASSERT_EQ(z.size(), 6u) << c[i];
    double total = 0.0;
    for (size_t k = 0; k < 6; ++k) {
      EXPECT_EQ(x[k].first, y[k].first) << "line " << i + 1;
      EXPECT_EQ(x[k].first, z[k].first) << "line " << i + 1;
      EXPECT_NEAR(x[k].second, y[k].second, 2e-4) << "line " << i + 1;
      EXPECT_NEAR(x[k].second, z[k].second, 2e-4) << "line " << i + 1;
      // Printed to 4 decimals: a sigmoid (ns, ova) prints 0.0000 or 1.0000 at its ends.
      EXPECT_GE(x[k].second, 0.0);
      EXPECT_LE(x[k].second, 1.0);
      total += x[k].second;
    }
    // hs: the tree's distribution over the leaves (printed to 4 decimals); ns and ova: a
    // sigmoid per label, which need not sum to 1.
    if (GetParam() == "hs") {
      EXPECT_NEAR(total, 1.0, 6 * 5e-5 + 1e-9) << a[i];
    }
  }
  // --k 3: fastText's P@3 and R@3 too. From the run folder, hs evaluates by its tree
  // search (evaluation.cc, count_by_search); from the export, by scoring every label.
  const std::string data = " --data " + quote(kTrec + "TREC.test.sample") + " --json --k 3";
  const Result eval_run = sift("eval --model " + quote(run) + data);
  const Result eval_file = sift("eval --model " + quote(model) + data);
  ASSERT_EQ(eval_run.status, 0) << eval_run;
  ASSERT_EQ(eval_file.status, 0) << eval_file;
  const auto ea = nlohmann::json::parse(eval_run.out)["splits"]["test"];
  const auto eb = nlohmann::json::parse(eval_file.out)["splits"]["test"];
  EXPECT_EQ(ea["accuracy"], eb["accuracy"]);
  // `sift eval --json` prints no loss: the two agree on macro-F1 too.
  EXPECT_NEAR(ea.at("macro_f1").get<double>(), eb.at("macro_f1").get<double>(), 1e-9);
  EXPECT_GT(ea.at("accuracy").get<double>(), 0.45);
  for (const char* metric : {"precision_at_k", "recall_at_k"}) {
    EXPECT_NEAR(ea.at(metric).get<double>(), eb.at(metric).get<double>(), 1e-9) << metric;
  }
  EXPECT_GT(ea.at("recall_at_k").get<double>(), ea.at("accuracy").get<double>());
}

INSTANTIATE_TEST_SUITE_P(FastTextLosses, LossesCli, ::testing::Values("hs", "ns", "ova"),
                         [](const auto& param_info) { return param_info.param; });

// 150 labels (label k: its own word and one shared with its neighbour; in a third of the
// rounds over the labels a line holds only the shared word, so there are mistakes to
// list), hs, no
// validation split: the test split's report lists the matrix's nonzero cells, report.txt
// and report.html its largest mistakes, not a 150 x 150 table (issue #18: at 2,000 labels
// the dense matrix took most of a run's time and memory).
TEST(LossesManyLabels, ReportsListTheLargestMistakesInsteadOfTheWholeMatrix) {
  const std::string dir = testing::make_temp_dir("sift_many_labels");
  std::string train, test;
  for (int i = 0; i < 3000; ++i) {
    const int k = i % 150;
    const std::string shared = "s" + std::to_string(k / 2);  // labels 2j and 2j + 1 alike
    const std::string text = i / 150 % 3 == 0 ? shared : "w" + std::to_string(k) + " " + shared;
    const std::string line = "__label__l" + std::to_string(k) + " " + text + "\n";
    (i / 150 % 10 == 0 ? test : train) += line;  // 2 of the 20 rounds
  }
  testing::write_file(dir + "/train.txt", train);
  testing::write_file(dir + "/test.txt", test);
  const Result r = testing::run_sift(
      "train configs/trec.yaml --quiet --set run.dir=" + quote(dir) +
          " --set run.name=r --set data.train.path=" + quote(dir + "/train.txt") +
          " --set data.test.path=" + quote(dir + "/test.txt") +
          " --set data.valid_split=0 --set model.buckets=20000 --set train.loss=hs",
      dir, "", kSource);
  ASSERT_EQ(r.status, 0) << r;
  const auto report = nlohmann::json::parse(testing::slurp(dir + "/r/report.json"));
  const auto& split = report["splits"]["test"];
  EXPECT_FALSE(split.contains("confusion"));
  int64_t total = 0;
  for (const auto& cell : split.at("confusion_cells")) total += cell.at(2).get<int64_t>();
  EXPECT_EQ(total, 300);
  EXPECT_EQ(total, split.at("examples").get<int64_t>());
  const std::string text = testing::slurp(dir + "/r/report.txt");
  EXPECT_EQ(text.find("confusion matrix"), std::string::npos);
  EXPECT_NE(text.find("150 labels: the 20 largest mistakes"), std::string::npos) << text;
  const std::string html = testing::slurp(dir + "/r/report.html");
  EXPECT_NE(html.find("150 labels: the confusion matrix is not drawn"), std::string::npos);
  EXPECT_EQ(html.find("class=\"cell\""), std::string::npos) << "no heat map cells";
  EXPECT_NE(html.find("<table id=\"confused\">"), std::string::npos);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST(LossesRefusals, HsOnAnotherModelAndTooFewNegativesNameTheKey) {
  const std::string dir = testing::make_temp_dir("sift_losses_refused");
  const std::string base = "train configs/trec.yaml --quiet --set run.dir=" + quote(dir) +
                           " --set data.train.path=" + quote(kTrec + "TREC.train.sample") +
                           " --set data.test.path=" + quote(kTrec + "TREC.test.sample");
  const Result textcnn = testing::run_sift(
      "train configs/trec_textcnn.yaml --quiet --set train.loss=ns --set run.dir=" + quote(dir) +
          " --set data.train.path=" + quote(kTrec + "TREC.train.sample"),
      dir, "", kSource);
  EXPECT_TRUE(CleanSiftError(textcnn, {"train.loss", "textcnn"})) << textcnn;
  const Result neg =
      testing::run_sift(base + " --set train.loss=ns --set train.neg=0", dir, "", kSource);
  EXPECT_TRUE(CleanSiftError(neg, {"train.neg"})) << neg;
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace losses_cli_test
}  // namespace sift
