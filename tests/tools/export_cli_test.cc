// `sift export`, and `sift predict` / `sift eval` / examples/classify.py on its file, run
// as a user runs them: the exported file alone gives the run folder's results.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "run_sift.h"

namespace sift {
namespace export_cli_test {

namespace fs = std::filesystem;
using testing::lines_of;
using testing::quote;
using testing::write_file;
std::string read_file(const std::string& path) { return testing::slurp(path); }

const std::string kSource = SIFT_SOURCE_DIR;
const std::string kSmsData = kSource + "/data/sms_spam/SMSSpamCollection";

using Result = testing::SiftResult;
using testing::CleanSiftError;
using testing::operator<<;

// Two `predict` outputs for the 600 test texts: the same label and score on every line.
void expect_same_predictions(const std::string& out_a, const std::string& out_b) {
  const auto a = lines_of(out_a), b = lines_of(out_b);
  ASSERT_EQ(a.size(), 600u);
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const size_t tab_a = a[i].find('\t'), tab_b = b[i].find('\t');
    EXPECT_EQ(a[i].substr(0, tab_a), b[i].substr(0, tab_b)) << "line " << i + 1;
    EXPECT_NEAR(std::stod(a[i].substr(tab_a + 1)), std::stod(b[i].substr(tab_b + 1)), 1e-4)
        << "line " << i + 1;
  }
}

class ExportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = sift::testing::make_temp_dir("sift_export_cli");
    // SMS spam: the first 600 messages are the test split and the texts to classify.
    const auto all = lines_of(read_file(kSmsData));
    std::string test, texts;
    for (size_t i = 0; i < 600; ++i) {
      test += all[i] + "\n";
      texts += all[i].substr(all[i].find('\t') + 1) + "\n";
    }
    write_file(dir_ + "/test.tsv", test);
    write_file(dir_ + "/texts.txt", texts);
    run_dir_ = dir_ + "/sms";
    const Result train = sift(
        "train configs/sms_spam.yaml --quiet --set train.epochs=1 --set model.buckets=200000"
        " --set run.dir=" +
        quote(dir_) + " --set run.name=sms --set data.test.path=" + quote(dir_ + "/test.tsv"));
    ASSERT_EQ(train.status, 0) << train;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Result sift(const std::string& args) { return testing::run_sift(args, dir_, "", kSource); }
  // examples/classify.py on the test texts, with the system Python.
  Result classify_py(const std::string& model) {
    return testing::run_command("/usr/bin/python3 examples/classify.py " + quote(model), dir_,
                                read_file(dir_ + "/texts.txt"), kSource);
  }

  std::string dir_, run_dir_;
};

TEST_F(ExportCli, PredictAndEvalFromTheFileEqualTheRunFolder) {
  const std::string model = dir_ + "/sms.pt";
  const Result exported = sift("export " + quote(run_dir_) + " --out " + quote(model));
  ASSERT_EQ(exported.status, 0) << exported;
  EXPECT_NE(exported.out.find("wrote " + model), std::string::npos) << exported;
  EXPECT_FALSE(fs::exists(model + ".tmp"));

  const std::string texts = quote(dir_ + "/texts.txt");
  const Result from_run =
      sift("predict --model " + quote(run_dir_) + " --input " + texts + " --top-k 2");
  const Result from_file =
      sift("predict --model " + quote(model) + " --input " + texts + " --top-k 2");
  ASSERT_EQ(from_run.status, 0) << from_run;
  ASSERT_EQ(from_file.status, 0) << from_file;
  EXPECT_EQ(lines_of(from_file.out).size(), 600u);
  EXPECT_EQ(from_file.out, from_run.out);

  const std::string data = " --data " + quote(dir_ + "/test.tsv") + " --json";
  const Result eval_run = sift("eval --model " + quote(run_dir_) + data);
  const Result eval_file = sift("eval --model " + quote(model) + data);
  ASSERT_EQ(eval_run.status, 0) << eval_run;
  ASSERT_EQ(eval_file.status, 0) << eval_file;
  const auto a = nlohmann::json::parse(eval_run.out)["splits"]["test"];
  const auto b = nlohmann::json::parse(eval_file.out)["splits"]["test"];
  EXPECT_EQ(a, b);
  EXPECT_GT(b["accuracy"].get<double>(), 0.9);
}

// How many lines of two `sift predict` outputs of equal length name the same label first.
size_t same_labels(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  size_t same = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    same += a[i].substr(0, a[i].find('\t')) == b[i].substr(0, b[i].find('\t'));
  }
  return same;
}

TEST_F(ExportCli, Int8FileIsSmallerAndPredictsAlmostTheSame) {
  const std::string fp32 = dir_ + "/fp32.pt", int8 = dir_ + "/int8.pt";
  ASSERT_EQ(sift("export " + quote(run_dir_) + " --out " + quote(fp32)).status, 0);
  const Result q = sift("export " + quote(run_dir_) + " --out " + quote(int8) + " --quantize int8");
  ASSERT_EQ(q.status, 0) << q;
  // 200k x 10 embedding: 4 bytes a weight against 1, plus 4 per row for the scale.
  EXPECT_LT(fs::file_size(int8), fs::file_size(fp32) * 45 / 100);
  const std::string texts = quote(dir_ + "/texts.txt");
  const auto a = lines_of(sift("predict --model " + quote(fp32) + " --input " + texts).out);
  const auto b = lines_of(sift("predict --model " + quote(int8) + " --input " + texts).out);
  ASSERT_EQ(a.size(), 600u);
  ASSERT_EQ(b.size(), a.size());
  EXPECT_GE(same_labels(a, b), 594u);  // at least 99% the same label
  EXPECT_TRUE(CleanSiftError(sift("export " + quote(run_dir_) + " --out x.pt --quantize int4"),
                             {"--quantize", "int4"}));
}

// An int8 file predicts the same labels whichever quantized engine loads it (forced by
// flag or by environment), and the Python example agrees with sift predict under each;
// a bf16 file predicts almost as fp32; refused combinations and engines are named.
TEST_F(ExportCli, Int8AndBf16FilesPredictUnderEveryEngineAndRefuseWhatDoesNotApply) {
  const std::string fp32 = dir_ + "/fp32.pt", int8 = dir_ + "/int8.pt", bf16 = dir_ + "/bf16.pt";
  ASSERT_EQ(sift("export " + quote(run_dir_) + " --out " + quote(fp32)).status, 0);
  ASSERT_EQ(sift("export " + quote(run_dir_) + " --out " + quote(int8) + " --quantize int8").status,
            0);
  const Result b = sift("export " + quote(run_dir_) + " --out " + quote(bf16) + " --dtype bf16");
  ASSERT_EQ(b.status, 0) << b;
  EXPECT_NE(b.out.find("bf16"), std::string::npos) << b;
  const std::string texts = quote(dir_ + "/texts.txt");
  const Result base = sift("predict --model " + quote(fp32) + " --input " + texts);
  ASSERT_EQ(base.status, 0) << base;
  const auto labels_of = [](const std::string& out) {
    std::vector<std::string> labels;
    for (const auto& line : lines_of(out)) labels.push_back(line.substr(0, line.find('\t')));
    return labels;
  };
  const auto expected = labels_of(base.out);
  const auto agree = [&](const std::string& out) {
    const auto got = labels_of(out);
    size_t same = 0;
    for (size_t i = 0; i < got.size() && i < expected.size(); ++i) same += got[i] == expected[i];
    return got.size() == expected.size() && same >= expected.size() * 99 / 100;
  };
  const Result from_bf16 = sift("predict --model " + quote(bf16) + " --input " + texts);
  ASSERT_EQ(from_bf16.status, 0) << from_bf16;
  EXPECT_TRUE(agree(from_bf16.out));
  for (const std::string engine : {"onednn", "qnnpack"}) {
    SCOPED_TRACE(engine);
    const Result flag = sift("predict --model " + quote(int8) + " --input " + texts +
                             " --quantized-engine " + engine);
    ASSERT_EQ(flag.status, 0) << flag;
    EXPECT_TRUE(agree(flag.out));
    const Result env =
        testing::run_command("SIFT_QUANTIZED_ENGINE=" + engine + " " + quote(SIFT_BINARY) +
                                 " predict --model " + quote(int8) + " --input " + texts,
                             dir_, "", kSource);
    EXPECT_EQ(env.out, flag.out);
    const Result python = testing::run_command(
        "/usr/bin/python3 examples/classify.py " + quote(int8) + " --quantized-engine " + engine,
        dir_, read_file(dir_ + "/texts.txt"), kSource);
    ASSERT_EQ(python.status, 0) << python;
    expect_same_predictions(flag.out, python.out);
  }
  EXPECT_TRUE(CleanSiftError(
      sift("predict --model " + quote(int8) + " --input " + texts + " --quantized-engine tpu"),
      {"--quantized-engine", "'tpu'", "onednn", "qnnpack"}));
  EXPECT_TRUE(CleanSiftError(sift("export " + quote(run_dir_) +
                                  " --out x.pt --dtype bf16 "
                                  "--quantize int8"),
                             {"--dtype bf16 --quantize int8"}));
  EXPECT_TRUE(CleanSiftError(sift("export " + quote(run_dir_) + " --out x.pt --dtype fp16"),
                             {"--dtype", "fp16"}));
}

// fastText's `quantize -cutoff -retrain -qnorm`: a file a small fraction of fp32's that
// labels the texts almost as the run does, and that Python reads as sift predict does.
TEST_F(ExportCli, PqWithCutoffRetrainAndQnormIsSmallAndPythonAgreesWithPredict) {
  const std::string fp32 = dir_ + "/fp32.pt", pq = dir_ + "/pq.pt";
  ASSERT_EQ(sift("export " + quote(run_dir_) + " --out " + quote(fp32)).status, 0);
  const Result q = sift("export " + quote(run_dir_) + " --out " + quote(pq) +
                        " --quantize pq --cutoff 20000 --retrain --qnorm");
  ASSERT_EQ(q.status, 0) << q;
  EXPECT_NE(q.out.find("pq: dsub 2, cutoff 20000, qnorm"), std::string::npos) << q;
  EXPECT_NE(q.err.find("retrain: epoch 1/1"), std::string::npos) << q;
  // 200k buckets x 10 dims of fp32 against 20k rows of 5 codes, a norm code and a 4-byte id.
  EXPECT_LT(fs::file_size(pq), fs::file_size(fp32) / 10);
  const std::string texts = quote(dir_ + "/texts.txt");
  const Result a = sift("predict --model " + quote(fp32) + " --input " + texts);
  const Result b = sift("predict --model " + quote(pq) + " --input " + texts);
  ASSERT_EQ(b.status, 0) << b;
  const auto la = lines_of(a.out), lb = lines_of(b.out);
  ASSERT_EQ(la.size(), 600u);
  ASSERT_EQ(lb.size(), la.size());
  EXPECT_GE(same_labels(la, lb), 582u);  // at least 97% the same label
  const Result python = classify_py(pq);
  ASSERT_EQ(python.status, 0) << python;
  expect_same_predictions(b.out, python.out);
}

// The run's data paths are relative to its folder (issue #38): --retrain from another
// working folder read 'data/sms_spam/...' under that folder and failed. --data names
// other training files (a run whose data moved, an imported run), --set changes options.
TEST_F(ExportCli, RetrainFromAnotherFolderFindsTheRunsDataAndDataNamesOtherFiles) {
  const std::string pq = " --out " + quote(dir_ + "/pq.pt") + " --quantize pq --cutoff 20000";
  const Result elsewhere =
      testing::run_sift("export " + quote(run_dir_) + pq + " --retrain", dir_, "", dir_);
  ASSERT_EQ(elsewhere.status, 0) << elsewhere;
  const Result data = testing::run_sift(
      "export sms" + pq + " --retrain-output --data test.tsv --set train.epochs=2", dir_, "", dir_);
  ASSERT_EQ(data.status, 0) << data;
  EXPECT_NE(data.err.find("retrain: epoch 2/2"), std::string::npos) << data;
  EXPECT_TRUE(CleanSiftError(
      testing::run_sift("export sms" + pq + " --retrain --data moved.tsv", dir_, "", dir_),
      {"moved.tsv"}));
  EXPECT_TRUE(CleanSiftError(sift("export " + quote(run_dir_) + " --out x.pt --data a.tsv"),
                             {"--data", "--retrain"}));
}

// The export says where it came from (issue #38): sift_format.json's provenance names the
// Sift version, git commit, command line, host and time of the export, its config's CRC,
// and the training run's own (from report.json).
TEST_F(ExportCli, TheExportRecordsItsProvenanceAndTheTrainingRunsProvenance) {
  const std::string out = dir_ + "/p.pt";
  ASSERT_EQ(sift("export " + quote(run_dir_) + " --out " + quote(out)).status, 0);
  const Result r = testing::run_command(
      "/usr/bin/python3 -c " +
          quote("import json, sys, zipfile\n"
                "z = zipfile.ZipFile(sys.argv[1])\n"
                "n = [x for x in z.namelist() if x.endswith('/extra/sift_format.json')][0]\n"
                "print(json.dumps(json.loads(z.read(n))['provenance']))\n") +
          " " + quote(out),
      dir_);
  ASSERT_EQ(r.status, 0) << r;
  const auto p = nlohmann::json::parse(r.out);
  EXPECT_EQ(p["sift_version"], "0.1.0");
  EXPECT_FALSE(p["git_commit"].get<std::string>().empty());
  EXPECT_NE(p["command_line"].get<std::string>().find("export " + run_dir_), std::string::npos);
  EXPECT_FALSE(p["host"].get<std::string>().empty());
  EXPECT_TRUE(std::regex_match(p["started"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  EXPECT_TRUE(
      std::regex_match(p["config_hash"].get<std::string>(), std::regex("crc32:[0-9a-f]{8}")));
  EXPECT_NE(p["trained"]["command_line"].get<std::string>().find("train configs/sms_spam.yaml"),
            std::string::npos);
  EXPECT_EQ(p["trained"]["sift_version"], "0.1.0");
  // The file still loads and predicts.
  EXPECT_EQ(sift("predict --model " + quote(out) + " --input " + quote(dir_ + "/texts.txt")).status,
            0);
}

TEST_F(ExportCli, PqFlagsThatDoNotApplyAreRefusedNamingTheFlag) {
  const std::string run = "export " + quote(run_dir_) + " --out " + quote(dir_ + "/x.pt") + " ";
  EXPECT_TRUE(CleanSiftError(sift(run + "--cutoff 100"), {"--cutoff", "--quantize pq"}));
  EXPECT_TRUE(CleanSiftError(sift(run + "--qout"), {"--qout", "--quantize pq"}));
  EXPECT_TRUE(CleanSiftError(sift(run + "--quantize pq --retrain"), {"--retrain", "--cutoff"}));
  EXPECT_TRUE(CleanSiftError(sift(run + "--quantize pq --cutoff 100000000"),
                             {"--cutoff 100000000", "rows"}));
  EXPECT_TRUE(CleanSiftError(sift(run + "--quantize pq --dsub 3"), {"--dsub 3", "model.dim 10"}));
  EXPECT_TRUE(CleanSiftError(sift(run + "--quantize pq --cutoff 10 --retrain --retrain-output"),
                             {"--retrain --retrain-output"}));
  EXPECT_FALSE(fs::exists(dir_ + "/x.pt"));
}

TEST_F(ExportCli, PythonExampleClassifiesLikeSiftPredict) {
  const std::string model = dir_ + "/sms.pt";
  ASSERT_EQ(sift("export " + quote(run_dir_) + " --out " + quote(model)).status, 0);
  const std::string texts = quote(dir_ + "/texts.txt");
  const Result cpp = sift("predict --model " + quote(model) + " --input " + texts);
  const Result python = classify_py(model);
  ASSERT_EQ(python.status, 0) << python;
  expect_same_predictions(cpp.out, python.out);
}

// Stop words from a file and dropped punctuation: the run folder keeps its own copy of the
// list (the file is gone when predicting), and the export carries it to Python.
TEST_F(ExportCli, StopWordsTravelWithTheRunAndTheExport) {
  const std::string words = dir_ + "/stop.txt";
  write_file(words, "# test list\nthe a to you i u\n");
  const Result train = sift(
      "train configs/sms_spam.yaml --quiet --set train.epochs=1 --set model.buckets=200000"
      " --set tokenizer.drop_punctuation=true --set tokenizer.stopwords=" +
      quote(words) + " --set run.dir=" + quote(dir_) +
      " --set run.name=stop --set data.test.path=" + quote(dir_ + "/test.tsv"));
  ASSERT_EQ(train.status, 0) << train;
  fs::remove(words);
  const std::string run_dir = dir_ + "/stop";
  EXPECT_EQ(read_file(run_dir + "/stopwords.txt"), "the\na\nto\nyou\ni\nu\n");
  const auto vocab = lines_of(read_file(run_dir + "/vocab.txt"));
  for (const auto& line : vocab) {
    const std::string word = line.substr(0, line.find('\t'));
    EXPECT_NE(word, "the");
    EXPECT_NE(word, ".");
  }
  const std::string model = dir_ + "/stop.pt";
  ASSERT_EQ(sift("export " + quote(run_dir) + " --out " + quote(model)).status, 0);
  const std::string texts = quote(dir_ + "/texts.txt");
  const Result from_run = sift("predict --model " + quote(run_dir) + " --input " + texts);
  const Result from_file = sift("predict --model " + quote(model) + " --input " + texts);
  const Result python = classify_py(model);
  ASSERT_EQ(from_run.status, 0) << from_run;
  ASSERT_EQ(python.status, 0) << python;
  EXPECT_EQ(from_file.out, from_run.out);
  expect_same_predictions(from_run.out, python.out);
}

// Multilingual text: the export's unicode.json lets the Python example fold case, split
// punctuation, keep emoji and normalise (NFKC) exactly as sift does.
class ExportCliUnicode : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "sift_export_unicode_XXXXXX";
    dir_ = mkdtemp(pattern.data());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Result sift(const std::string& args) { return testing::run_sift(args, dir_, "", kSource); }

  std::string dir_;
};

// Lines of random words of one language, with curly quotes, emoji and mixed case.
std::string multilingual_lines(unsigned seed, size_t per_label, bool with_labels) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> languages = {
      {"ro", {"ȘTIRI", "știri", "Țară", "„România”", "București,", "ŞI", "și", "încă"}},
      {"vi", {"VIỆT", "Nam", "Đà", "Nẵng", "người", "NGƯỜI", "VIE\u0323\u0302T", "tiếng"}},
      {"el", {"ΟΔΟΣ", "οδός", "Αθήνα;", "ΕΛΛΆΔΑ", "ΐ", "καλημέρα", "ＡΘΗΝΑ", "λόγος"}},
      {"hy", {"ՀԱՅԱՍՏԱՆ", "Երևան։", "«Բարև»", "ԵՎ", "և", "գիրք", "մարդ", "ﬓ"}},
      {"ar", {"مَرْحَبًا،", "كيف", "حالك؟", "السلام", "ﻻ", "١٢٣", "كتاب", "عالم"}},
      {"de", {"Straße", "STRASSE", "Maß", "GRÜẞE", "“Grüße”", "ﬁsch", "Ｆｉｓｃｈ", "über"}},
  };
  const std::vector<std::string> extras = {
      "👍🏽", "❤️", "👨‍👩‍👧", "!", "…", "—", "ok", "\u3000"};
  std::mt19937 rng(seed);
  std::string out;
  for (size_t i = 0; i < per_label; ++i) {
    for (const auto& [label, words] : languages) {
      std::string line = with_labels ? label + "\t" : "";
      const size_t n = 3 + rng() % 6;
      for (size_t k = 0; k < n; ++k) {
        line += rng() % 5 == 0 ? extras[rng() % extras.size()] : words[rng() % words.size()];
        if (rng() % 4 != 0) line += " ";
      }
      out += line + "\n";
    }
  }
  return out;
}

TEST_F(ExportCliUnicode, PythonExampleClassifiesMultilingualTextLikeSiftPredict) {
  write_file(dir_ + "/train.tsv", multilingual_lines(1, 40, true));
  const std::string texts = dir_ + "/texts.txt";
  write_file(texts, multilingual_lines(2, 10, false));
  for (const std::string normalize : {"none", "nfkc"}) {
    SCOPED_TRACE("tokenizer.normalize=" + normalize);
    const std::string name = "multi_" + normalize;
    const Result train = sift(
        "train configs/sms_spam.yaml --quiet --set train.epochs=3 --set model.buckets=20000"
        " --set data.train.path=" +
        quote(dir_ + "/train.tsv") + " --set tokenizer.normalize=" + normalize +
        " --set run.dir=" + quote(dir_) + " --set run.name=" + name);
    ASSERT_EQ(train.status, 0) << train;
    const std::string model = dir_ + "/" + name + ".pt";
    const Result exported = sift("export " + quote(dir_ + "/" + name) + " --out " + quote(model));
    ASSERT_EQ(exported.status, 0) << exported;
    const Result cpp =
        sift("predict --model " + quote(model) + " --input " + quote(texts) + " --top-k 6");
    const Result python =
        testing::run_command("/usr/bin/python3 examples/classify.py " + quote(model) + " --top-k 6",
                             dir_, read_file(texts), kSource);
    ASSERT_EQ(cpp.status, 0) << cpp;
    ASSERT_EQ(python.status, 0) << python;
    const auto a = lines_of(cpp.out), b = lines_of(python.out);
    ASSERT_EQ(a.size(), 60u);
    ASSERT_EQ(b.size(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      // label<TAB>probability six times: the same labels in the same order, each
      // probability within rounding.
      std::vector<std::string> x, y;
      std::stringstream sa(a[i]), sb(b[i]);
      for (std::string f; std::getline(sa, f, '\t');) x.push_back(f);
      for (std::string f; std::getline(sb, f, '\t');) y.push_back(f);
      ASSERT_EQ(x.size(), 12u) << a[i];
      ASSERT_EQ(y.size(), 12u) << b[i];
      for (size_t k = 0; k < 12; k += 2) {
        EXPECT_EQ(x[k], y[k]) << "line " << i + 1;
        EXPECT_NEAR(std::stod(x[k + 1]), std::stod(y[k + 1]), 2e-4) << "line " << i + 1;
      }
    }
  }
}

TEST_F(ExportCli, BadFilesGetOneClearError) {
  const std::string model = dir_ + "/sms.pt";
  ASSERT_EQ(sift("export " + quote(run_dir_) + " --out " + quote(model)).status, 0);
  const std::string bytes = read_file(model);
  const std::string truncated = dir_ + "/truncated.pt";
  write_file(truncated, bytes.substr(0, bytes.size() / 3));
  EXPECT_TRUE(CleanSiftError(sift("predict --model " + quote(truncated) + " </dev/null"),
                             {truncated, "truncated or corrupted"}));
  const std::string text = dir_ + "/texts.txt";
  EXPECT_TRUE(CleanSiftError(sift("eval --model " + quote(text) + " --data " + quote(text)),
                             {text, "is not a Sift export"}));
  EXPECT_TRUE(CleanSiftError(sift("predict --model " + quote(dir_ + "/none.pt") + " </dev/null"),
                             {dir_ + "/none.pt", "is not a run folder or an exported model"}));
  EXPECT_TRUE(CleanSiftError(sift("export " + quote(dir_ + "/no_run") + " --out x.pt"),
                             {dir_ + "/no_run"}));
}

}  // namespace export_cli_test
}  // namespace sift
