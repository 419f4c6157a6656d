// End-to-end tests of the `sift` executable, run as a user runs it: exit status, stdout,
// stderr and the files of the run folder.
//
// Every test is its own process under ctest (gtest_discover_tests), so the one trained
// SMS spam model the eval/predict tests share is cached under the temp folder, keyed by
// the binary and the data, and built once under a file lock.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "config/loader.h"
#include "run_sift.h"

namespace sift {
namespace sift_cli_test {

namespace fs = std::filesystem;
using testing::lines_of;
using testing::make_temp_dir;
using testing::quote;
using testing::write_file;
std::string read_file(const std::string& path) { return testing::slurp(path); }

const std::string kSift = SIFT_BINARY;
const std::string kSource = SIFT_SOURCE_DIR;
const std::string kSmsData = kSource + "/data/sms_spam/SMSSpamCollection";
const std::string kSmsConfig = kSource + "/configs/sms_spam.yaml";
// Settings for runs whose accuracy is not checked: one quick epoch, a small table.
const std::string kFast = " --quiet --set train.epochs=1 --set model.buckets=100000";

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1) {
    fields.push_back(line.substr(start, tab - start));
  }
  fields.push_back(line.substr(start));
  return fields;
}

using Result = testing::SiftResult;
using testing::operator<<;

// Runs `sift ARGS` in `cwd` with `input` on stdin.
Result sift(const std::string& args, const std::string& input = "",
            const std::string& cwd = kSource) {
  static const std::string io = make_temp_dir("sift_cli_io");
  return testing::run_sift(args, io, input, cwd);
}

const auto CleanError = testing::CleanSiftError;

nlohmann::json parse_json(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << "not JSON:\n" << text;
  return j;
}

// The shared SMS spam model, trained with the config's own settings plus a test split
// (the first lines of the data file) so that `sift eval` can be compared with it.
struct SmsRun {
  std::string dir;        // the run folder
  std::string test_file;  // the test split it was evaluated on
  Result train;           // the training command (stdout: --json summary)
};

// Changes when the executable (the launcher and the sift-main it runs), the data or the
// config changes.
std::string cache_key() {
  std::string key;
  const std::string main = (fs::path(kSift).parent_path() / "sift-main").string();
  for (const std::string& f : {kSift, main, kSmsData, kSmsConfig}) {
    struct stat st {};
    ::stat(f.c_str(), &st);
    key += std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + "-" +
           std::to_string(st.st_size) + "-";
  }
  return key;
}

const SmsRun& sms_run() {
  static const SmsRun run = [] {
    const std::string root = ::testing::TempDir() + "sift_cli_cache_" + std::to_string(getuid());
    fs::create_directories(root);
    SmsRun r;
    const std::string base = root + "/" + cache_key();
    r.dir = base + "/sms";
    r.test_file = base + "/test.tsv";
    const std::string done = base + "/done";
    const int lock = ::open((root + "/lock").c_str(), O_CREAT | O_RDWR, 0644);
    ::flock(lock, LOCK_EX);
    if (fs::exists(done)) {
      r.train.status = 0;
      r.train.out = read_file(done);
    } else {
      fs::remove_all(base);
      fs::create_directories(base);
      std::string head;
      const auto all = lines_of(read_file(kSmsData));
      for (size_t i = 0; i < 800 && i < all.size(); ++i) head += all[i] + "\n";
      write_file(r.test_file, head);
      r.train = sift("train configs/sms_spam.yaml --json --quiet --set run.dir=" + quote(base) +
                     " --set run.name=sms --set data.test.path=" + quote(r.test_file));
      if (r.train.status == 0) write_file(done, r.train.out);
    }
    ::flock(lock, LOCK_UN);
    ::close(lock);
    return r;
  }();
  return run;
}

// A copy of the SMS run folder that a test may damage.
std::string copy_of_sms_run(const std::string& dir) {
  const std::string copy = dir + "/run";
  fs::create_directories(copy);
  for (const char* f : {"config.yaml", "labels.txt", "vocab.txt", "best.ckpt"}) {
    fs::copy_file(sms_run().dir + "/" + f, copy + "/" + f);
  }
  return copy;
}

class SiftCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("sift_cli"); }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // A run on the SMS config into this test's folder.
  std::string run_args(const std::string& name = "r") const {
    return " --set run.dir=" + quote(dir_) + " --set run.name=" + name;
  }
  // The first `n` SMS lines, then `extra`, as a TSV file.
  std::string sms_sample(const std::string& name, size_t n, const std::string& extra = "") {
    const auto all = lines_of(read_file(kSmsData));
    std::string text;
    for (size_t i = 0; i < n && i < all.size(); ++i) text += all[i] + "\n";
    const std::string path = dir_ + "/" + name;
    write_file(path, text + extra);
    return path;
  }
  std::string dir_;
};

// ---------------------------------------------------------------------------------------
// Training, evaluation and prediction on the embedded SMS spam task.

TEST_F(SiftCli, TrainSmsSpamReachesAccuracyAndWritesTheRunFolder) {
  const SmsRun& run = sms_run();
  ASSERT_EQ(run.train.status, 0) << run.train;
  const nlohmann::json summary = parse_json(run.train.out);
  ASSERT_TRUE(summary.contains("splits")) << run.train.out;
  EXPECT_GE(summary["splits"]["valid"]["accuracy"].get<double>(), 0.97) << run.train.out;
  EXPECT_GT(summary["splits"]["valid"]["examples"].get<int64_t>(), 300);
  EXPECT_EQ(summary["train"]["skipped_records"].get<int64_t>(), 0);
  for (const char* f : {"config.yaml", "labels.txt", "vocab.txt", "best.ckpt", "last.ckpt",
                        "metrics.jsonl", "report.json", "report.txt"}) {
    EXPECT_TRUE(fs::is_regular_file(run.dir + "/" + f)) << f;
    EXPECT_FALSE(fs::exists(run.dir + "/" + f + ".tmp")) << f;
  }
  EXPECT_FALSE(read_file(run.dir + "/metrics.jsonl").empty());
  EXPECT_EQ(lines_of(read_file(run.dir + "/labels.txt")),
            (std::vector<std::string>{"ham", "spam"}));
  const auto report = parse_json(read_file(run.dir + "/report.json"));
  EXPECT_EQ(report["splits"]["valid"]["accuracy"], summary["splits"]["valid"]["accuracy"]);
  EXPECT_NE(read_file(run.dir + "/report.txt").find("confusion matrix"), std::string::npos);
  // The saved config is the resolved one and loads back.
  const SiftConfig saved = load_config(run.dir + "/config.yaml");
  EXPECT_EQ(saved.model.dim, 10);
  EXPECT_EQ(saved.run.name, "sms");
}

// DISABLED: framework/trainer.cc (train_epochs) skips end_epoch for the final epoch. The
// batch loop `while (run.step < total_steps && (more = batches->next(batch)))` stops on the
// step count after the epoch's last batch without asking the stream again, so `more` is
// still true and `if (more && run.step >= total_steps)` takes the "step limit inside an
// epoch" branch: the last epoch is never validated nor written to metrics.jsonl, last.ckpt
// is saved as mid-epoch, and with train.epochs=1 no best.ckpt is written at all.
// Enable once the trainer's owner has fixed it.
TEST_F(SiftCli, MetricsHoldOneLinePerEpoch) {
  const SmsRun& run = sms_run();
  ASSERT_EQ(run.train.status, 0) << run.train;
  // The config trains 5 epochs: each is validated and logged, the last one included.
  const auto metrics = lines_of(read_file(run.dir + "/metrics.jsonl"));
  ASSERT_EQ(metrics.size(), 5u) << read_file(run.dir + "/metrics.jsonl");
  for (size_t i = 0; i < metrics.size(); ++i) {
    const auto m = parse_json(metrics[i]);
    EXPECT_EQ(m["epoch"].get<int64_t>(), static_cast<int64_t>(i + 1));
    EXPECT_TRUE(m.contains("valid_accuracy"));
  }
}

TEST_F(SiftCli, EvalOnAFileMatchesTheTrainingReport) {
  const SmsRun& run = sms_run();
  ASSERT_EQ(run.train.status, 0) << run.train;
  const nlohmann::json train = parse_json(run.train.out);
  ASSERT_TRUE(train["splits"].contains("test")) << run.train.out;
  const Result r = sift("eval --model " + quote(run.dir) + " --data " + quote(run.test_file) +
                        " --format tsv --text 1 --label 0 --json");
  ASSERT_EQ(r.status, 0) << r;
  const nlohmann::json eval = parse_json(r.out);
  EXPECT_EQ(eval["splits"]["test"]["examples"].get<int64_t>(), 800);
  EXPECT_EQ(eval["splits"]["test"]["examples"], train["splits"]["test"]["examples"]);
  EXPECT_DOUBLE_EQ(eval["splits"]["test"]["accuracy"].get<double>(),
                   train["splits"]["test"]["accuracy"].get<double>());
  EXPECT_DOUBLE_EQ(eval["splits"]["test"]["macro_f1"].get<double>(),
                   train["splits"]["test"]["macro_f1"].get<double>());
}

TEST_F(SiftCli, EvalTextReportAndDefaultTestSplit) {
  const SmsRun& run = sms_run();
  ASSERT_EQ(run.train.status, 0) << run.train;
  // Without --data: the run's own test split.
  const Result r = sift("eval --model " + quote(run.dir));
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("accuracy"), std::string::npos) << r;
  EXPECT_NE(r.out.find("spam"), std::string::npos) << r;
  EXPECT_NE(r.out.find("examples 800"), std::string::npos) << r;
}

TEST_F(SiftCli, PredictTopTwo) {
  const SmsRun& run = sms_run();
  ASSERT_EQ(run.train.status, 0) << run.train;
  const std::vector<std::string> texts = {
      "WINNER!! You have won a free prize. Call 09061701461 now to claim your cash award",
      "Ok, I'll see you at lunch tomorrow", "",
      "urgent! txt STOP to 87121 to claim ur free ringtone"};
  std::string input;
  for (const auto& t : texts) input += t + "\n";
  const Result r = sift("predict --model " + quote(run.dir) + " --top-k 2", input);
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.err, "");
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), texts.size()) << r;
  for (const auto& line : lines) {
    const auto f = split_tabs(line);
    ASSERT_EQ(f.size(), 4u) << line;
    EXPECT_NE(f[0], f[2]) << line;
    for (const auto& label : {f[0], f[2]}) EXPECT_TRUE(label == "ham" || label == "spam") << line;
    const double p1 = std::stod(f[1]), p2 = std::stod(f[3]);
    EXPECT_GE(p1, p2) << line;
    EXPECT_GE(p2, 0.0) << line;
    EXPECT_LE(p1 + p2, 1.0 + 1e-3) << line;  // printed with 4 decimals
  }
  EXPECT_EQ(split_tabs(lines[0])[0], "spam") << r.out;
  EXPECT_EQ(split_tabs(lines[1])[0], "ham") << r.out;
  EXPECT_EQ(split_tabs(lines[3])[0], "spam") << r.out;
}

TEST_F(SiftCli, PredictJson) {
  const SmsRun& run = sms_run();
  ASSERT_EQ(run.train.status, 0) << run.train;
  const std::string input = "free entry in 2 a wkly comp to win cash\r\nsorry, I'll call later\n";
  const Result r = sift("predict --model " + quote(run.dir) + " --top-k 2 --json", input);
  ASSERT_EQ(r.status, 0) << r;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2u) << r;
  const std::vector<std::string> texts = {"free entry in 2 a wkly comp to win cash",
                                          "sorry, I'll call later"};
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto j = parse_json(lines[i]);
    EXPECT_EQ(j["text"], texts[i]);
    ASSERT_EQ(j["predictions"].size(), 2u) << lines[i];
    const double p1 = j["predictions"][0]["probability"].get<double>();
    const double p2 = j["predictions"][1]["probability"].get<double>();
    EXPECT_GE(p1, p2);
    EXPECT_NEAR(p1 + p2, 1.0, 1e-5);  // two classes: top-2 is all of them
    EXPECT_NE(j["predictions"][0]["label"], j["predictions"][1]["label"]);
  }
}

TEST_F(SiftCli, PredictTopKIsCappedAtTheNumberOfLabelsAndReadsAFile) {
  const SmsRun& run = sms_run();
  ASSERT_EQ(run.train.status, 0) << run.train;
  write_file(dir_ + "/in.txt", "hello\nfree cash prize\n");
  const Result r =
      sift("predict --model " + quote(run.dir) + " --top-k 5 --input " + quote(dir_ + "/in.txt"));
  ASSERT_EQ(r.status, 0) << r;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(split_tabs(lines[0]).size(), 4u) << lines[0];
}

TEST_F(SiftCli, PredictDefaultsToOneLabelPerLine) {
  const SmsRun& run = sms_run();
  ASSERT_EQ(run.train.status, 0) << run.train;
  const Result r = sift("predict --model " + quote(run.dir), "hello\n\nfree cash\n");
  ASSERT_EQ(r.status, 0) << r;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r;  // a blank line still gets a prediction
  for (const auto& line : lines) EXPECT_EQ(split_tabs(line).size(), 2u) << line;
}

// ---------------------------------------------------------------------------------------
// Bad data.

TEST_F(SiftCli, MissingDataFile) {
  const std::string missing = dir_ + "/absent.tsv";
  const Result r = sift("train configs/sms_spam.yaml" + kFast + run_args() +
                        " --set data.train.path=" + quote(missing));
  EXPECT_TRUE(CleanError(r, {"data.train.path", missing}));
  EXPECT_FALSE(fs::exists(dir_ + "/r/best.ckpt"));
}

TEST_F(SiftCli, GlobMatchingNothing) {
  const std::string pattern = dir_ + "/*.tsv";
  const Result r = sift("train configs/sms_spam.yaml" + kFast + run_args() +
                        " --set data.train.path=" + quote(pattern));
  EXPECT_TRUE(CleanError(r, {"data.train.path", "no file matches", pattern}));
}

TEST_F(SiftCli, MalformedLineIsAnErrorWithFileAndLine) {
  // Line 203 has no tab: no text column.
  const std::string path = sms_sample("bad.tsv", 202, "spam_without_a_text_column\n");
  const Result r = sift("train configs/sms_spam.yaml" + kFast + run_args() +
                        " --set data.train.path=" + quote(path) + " --set data.on_bad_line=error");
  EXPECT_TRUE(CleanError(r, {path + ":203"}));
}

TEST_F(SiftCli, MalformedLinesAreSkippedAndCounted) {
  std::string path = sms_sample("bad.tsv", 600);
  {
    // Two malformed records among good ones.
    const auto all = lines_of(read_file(path));
    std::string text;
    for (size_t i = 0; i < all.size(); ++i) {
      if (i == 10 || i == 300) text += "no tab on this line\n";
      text += all[i] + "\n";
    }
    write_file(path, text);
  }
  const Result r = sift("train configs/sms_spam.yaml --json" + kFast + run_args() +
                        " --set data.train.path=" + quote(path) + " --set data.on_bad_line=skip");
  ASSERT_EQ(r.status, 0) << r;
  const auto j = parse_json(r.out);
  EXPECT_EQ(j["train"]["skipped_records"].get<int64_t>(), 2) << r.out;
  // The 600 good records are split between training and validation; the bad ones in neither.
  EXPECT_EQ(j["train"]["records"].get<int64_t>() + j["splits"]["valid"]["examples"].get<int64_t>(),
            600)
      << r.out;
}

TEST_F(SiftCli, OneEpochRunIsValidatedAndSaved) {
  const std::string path = sms_sample("small.tsv", 600);
  const Result r = sift("train configs/sms_spam.yaml --json" + kFast + run_args() +
                        " --set data.train.path=" + quote(path));
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(parse_json(r.out)["train"]["best_epoch"].get<int64_t>(), 1) << r.out;
  EXPECT_TRUE(fs::exists(dir_ + "/r/best.ckpt"));
  EXPECT_TRUE(fs::exists(dir_ + "/r/last.ckpt"));
  EXPECT_EQ(lines_of(read_file(dir_ + "/r/metrics.jsonl")).size(), 1u);
}

// The best weights are copied only when training goes on past them (saving.h
// keep_best_weights): here it does, and the final evaluation must still be epoch 1's.
TEST_F(SiftCli, TheFinalEvaluationUsesTheBestEpochWhenTrainingWentOnPastIt) {
  // train.min_delta=1: no later validation can count as better than the first.
  const Result r = sift("train configs/sms_spam.yaml --json --quiet --set train.epochs=3" +
                        run_args() + " --set train.min_delta=1");
  ASSERT_EQ(r.status, 0) << r;
  const auto report = parse_json(r.out);
  EXPECT_EQ(report["train"]["best_epoch"].get<int64_t>(), 1) << r.out;
  const auto rows = lines_of(read_file(dir_ + "/r/metrics.jsonl"));
  ASSERT_EQ(rows.size(), 3u);
  const double first = parse_json(rows[0])["valid_accuracy"].get<double>();
  const double last = parse_json(rows[2])["valid_accuracy"].get<double>();
  ASSERT_NE(first, last) << "the epochs must differ for this test to tell them apart";
  EXPECT_EQ(report["splits"]["valid"]["accuracy"].get<double>(), first) << r.out;
}

// The same for a model whose weights did not begin as a fill (TextCNN): its best weights
// are a copy in memory, where a fastText table's are written to best.ckpt (train_loop.cc's keep_best_weights).
TEST_F(SiftCli, TheFinalEvaluationUsesTheBestEpochOfAModelKeptInMemory) {
  const std::string path = sms_sample("small.tsv", 600);
  write_file(dir_ + "/c.yaml", "data:\n  train:\n    path: " + path +
                                   "\n  format: tsv\n  text: 1\n  label: 0\n"
                                   "model:\n  type: textcnn\n  dim: 16\n  filters: 8\n"
                                   "train:\n  epochs: 3\n  min_delta: 1\n");
  const Result r = sift("train " + quote(dir_ + "/c.yaml") + " --quiet" + run_args());
  ASSERT_EQ(r.status, 0) << r;
  const auto report = parse_json(read_file(dir_ + "/r/report.json"));
  EXPECT_EQ(report["train"]["best_epoch"].get<int64_t>(), 1);
  const auto rows = lines_of(read_file(dir_ + "/r/metrics.jsonl"));
  ASSERT_EQ(rows.size(), 3u);
  const double first = parse_json(rows[0])["valid_loss"].get<double>();
  ASSERT_NE(first, parse_json(rows[2])["valid_loss"].get<double>());
  EXPECT_EQ(report["splits"]["valid"]["loss"].get<double>(), first);
}

TEST_F(SiftCli, LabelUnseenInTrainingAtEvaluation) {
  const SmsRun& run = sms_run();
  ASSERT_EQ(run.train.status, 0) << run.train;
  const std::string path = dir_ + "/eval.tsv";
  write_file(path, "ham\tsee you soon\nham\tok thanks\neggs\tgreen eggs and ham\n");
  const Result r = sift("eval --model " + quote(run.dir) + " --data " + quote(path) +
                        " --format tsv --text 1 --label 0");
  EXPECT_TRUE(CleanError(r, {path + ":3", "'eggs'"}));
}

// Eval's flags were pasted into YAML unquoted: '*.tsv' was an alias, '@list' a reserved
// indicator and 'a,b.tsv' two list items.
TEST_F(SiftCli, EvalDataTakesGlobsListFilesAndCommasInNames) {
  const SmsRun& run = sms_run();
  ASSERT_EQ(run.train.status, 0) << run.train;
  fs::create_directories(dir_ + "/in");
  write_file(dir_ + "/in/a,b.tsv", "ham\tsee you soon\nspam\tWIN a prize now\n");
  write_file(dir_ + "/list", dir_ + "/in/a,b.tsv\n");
  for (const std::string& data :
       {dir_ + "/in/a,b.tsv", std::string("*.tsv"), std::string("@list")}) {
    const Result r = sift("eval --model " + quote(run.dir) + " --data " + quote(data) +
                              " --format tsv --text 1 --label 0 --json",
                          "", data == "*.tsv" ? dir_ + "/in" : dir_);
    ASSERT_EQ(r.status, 0) << data << "\n" << r;
    EXPECT_EQ(parse_json(r.out)["splits"]["test"]["examples"].get<int64_t>(), 2) << data;
  }
}

TEST_F(SiftCli, LabelWithANewlineIsRefusedAtReadTimeNamingFileAndLine) {
  const std::string path = dir_ + "/train.jsonl";
  write_file(path, "{\"l\": \"ham\", \"t\": \"ok\"}\n{\"l\": \"sp\\nam\", \"t\": \"win\"}\n");
  const Result r = sift("train configs/sms_spam.yaml" + kFast + run_args() +
                        " --set data.train.path=" + quote(path) +
                        " --set data.format=jsonl --set data.text=[t] --set data.label=l");
  EXPECT_TRUE(CleanError(r, {path + ":2", "'sp\\nam' holds a control character"}));
  EXPECT_FALSE(fs::exists(dir_ + "/r/labels.txt"));
}

TEST_F(SiftCli, AModelLargerThanMemoryIsRefusedNamingItsKeys) {
  const Result r = sift("train configs/sms_spam.yaml" + kFast + run_args() +
                        " --set model.buckets=9223372036854775807");
  EXPECT_TRUE(CleanError(r, {"model.buckets, model.dim, model.ngrams: the fasttext model needs"}));
  EXPECT_TRUE(CleanError(
      sift("train configs/sms_spam.yaml" + kFast + run_args() + " --set model.ngrams=1000000000"),
      {"--set model.ngrams", "[1, 16]"}));
}

TEST_F(SiftCli, TestLabelUnseenInTrainingIsRefusedBeforeTrainingStarts) {
  const std::string train = sms_sample("train.tsv", 300);
  const std::string test = dir_ + "/test.tsv";
  write_file(test, "ham\tsee you soon\neggs\tgreen eggs and ham\n");
  const Result r =
      sift("train configs/sms_spam.yaml" + kFast + run_args() +
           " --set data.train.path=" + quote(train) + " --set data.test.path=" + quote(test));
  EXPECT_TRUE(CleanError(r, {test + ":2: label 'eggs' of data.test.path", "(ham, spam)"}));
  EXPECT_FALSE(fs::exists(dir_ + "/r/last.ckpt"));  // nothing trained
}

// A label with no text (MPQA has 3, CR 4) is a record: every model trains on it, batches
// of empty texts only among them, and the report counts them.
TEST_F(SiftCli, EmptyTextsTrainWithEveryModelAndAreCounted) {
  const auto lines = lines_of(read_file(kSmsData));
  std::string text = "ham\t\nspam\t   \nham\t\nham\t\n";  // the first batch: empty texts only
  for (size_t i = 0; i < 60; ++i) text += lines[i] + "\n";
  write_file(dir_ + "/train.tsv", text + "spam\t\n");
  write_file(dir_ + "/c.yaml",
             "data:\n  train:\n    path: " + dir_ +
                 "/train.tsv\n  format: tsv\n  text: 1\n"
                 "  label: 0\n  shuffle_buffer: 0\n  valid_split: 0\ntrain:\n  epochs: 1\n"
                 "  batch_size: 4\n");
  for (const std::string model : {"fasttext", "textcnn", "rnn", "transformer", "mlp"}) {
    const Result r = sift("train " + quote(dir_ + "/c.yaml") + " --quiet" + run_args(model) +
                          " --set model.type=" + model);
    ASSERT_EQ(r.status, 0) << model << "\n" << r;
    const nlohmann::json report = parse_json(read_file(dir_ + "/" + model + "/report.json"));
    EXPECT_EQ(report["train"]["empty_texts"].get<int64_t>(), 5) << model;
    EXPECT_EQ(report["train"]["skipped_records"].get<int64_t>(), 0) << model;
    EXPECT_NE(read_file(dir_ + "/" + model + "/report.txt").find("with a label and an empty text"),
              std::string::npos);
  }
}

TEST_F(SiftCli, EmptyTrainingSet) {
  const std::string path = dir_ + "/empty.tsv";
  write_file(path, "\n\n  \n");  // blank lines only
  const Result r = sift("train configs/sms_spam.yaml" + kFast + run_args() +
                        " --set data.train.path=" + quote(path));
  EXPECT_TRUE(CleanError(r, {path, "no record"}));
}

TEST_F(SiftCli, EmptyEvaluationSet) {
  const SmsRun& run = sms_run();
  ASSERT_EQ(run.train.status, 0) << run.train;
  const std::string path = dir_ + "/empty.tsv";
  write_file(path, "");
  const Result r = sift("eval --model " + quote(run.dir) + " --data " + quote(path));
  EXPECT_TRUE(CleanError(r, {path}));
}

TEST_F(SiftCli, SingleLabelTrainingSet) {
  const std::string path = dir_ + "/one.tsv";
  write_file(path, "ham\thello\nham\tgood morning\nham\tsee you\n");
  const Result r = sift("train configs/sms_spam.yaml" + kFast + run_args() +
                        " --set data.train.path=" + quote(path));
  EXPECT_TRUE(CleanError(r, {"at least 2"}));
}

// ---------------------------------------------------------------------------------------
// Bad configs.

TEST_F(SiftCli, YamlSyntaxError) {
  const std::string path = dir_ + "/syntax.yaml";
  write_file(path, "train:\n  epochs: 3\n  batch_size: [1, 2\n");
  const Result r = sift("train " + quote(path) + " --quiet");
  EXPECT_TRUE(CleanError(r, {path + ":", "YAML syntax error"}));
}

TEST_F(SiftCli, UnknownKeyInFile) {
  const std::string path = dir_ + "/unknown.yaml";
  write_file(path, "data:\n  train:\n    path: x.tsv\ntrain:\n  epoch: 3\n");
  const Result r = sift("train " + quote(path) + " --quiet");
  EXPECT_TRUE(CleanError(r, {path + ":5", "'train.epoch'", "did you mean 'train.epochs'"}));
}

TEST_F(SiftCli, UnknownKeyInSet) {
  const Result r = sift("train configs/sms_spam.yaml --quiet --set train.epoch=3");
  EXPECT_TRUE(CleanError(r, {"--set train.epoch", "did you mean 'train.epochs'"}));
}

TEST_F(SiftCli, WrongType) {
  const std::string path = dir_ + "/type.yaml";
  write_file(path, "train:\n  batch_size: lots\n");
  EXPECT_TRUE(CleanError(sift("train " + quote(path) + " --quiet"),
                         {path + ":2", "'train.batch_size'", "integer"}));
}

TEST_F(SiftCli, OutOfRangeValues) {
  EXPECT_TRUE(CleanError(sift("train configs/sms_spam.yaml --quiet --set train.optimizer.lr=-1"),
                         {"train.optimizer.lr", "> 0"}));
  EXPECT_TRUE(CleanError(sift("train configs/sms_spam.yaml --quiet --set train.epochs=0"),
                         {"train.epochs", ">= 1"}));
}

TEST_F(SiftCli, OutOfRangeInFileNamesTheLine) {
  const std::string path = dir_ + "/range.yaml";
  write_file(path, "run:\n  seed: 1\ntrain:\n  epochs: 0\n");
  EXPECT_TRUE(CleanError(sift("train " + quote(path) + " --quiet"), {path + ":4", "train.epochs"}));
}

TEST_F(SiftCli, MissingConfigFile) {
  const std::string path = dir_ + "/absent.yaml";
  EXPECT_TRUE(CleanError(sift("train " + quote(path)), {"cannot open config file", path}));
}

TEST_F(SiftCli, BadStopWordSettings) {
  const std::string absent = dir_ + "/absent_stop.txt";
  EXPECT_TRUE(CleanError(
      sift("train configs/sms_spam.yaml --quiet --set tokenizer.stopwords=" + quote(absent)),
      {"tokenizer.stopwords", absent}));
  EXPECT_TRUE(CleanError(sift("train configs/sms_spam.yaml --quiet --set tokenizer.type="
                              "sentencepiece --set tokenizer.model=x.model "
                              "--set tokenizer.stopwords=english"),
                         {"tokenizer.stopwords", "word tokenizer only"}));
}

TEST_F(SiftCli, ColumnFormatWithoutColumns) {
  const Result r = sift("train configs/sms_spam.yaml --quiet --set data.text=[]");
  EXPECT_TRUE(CleanError(r, {"data.text"}));
}

// A config whose data set is not fetched yet (as on a fresh clone: data/ holds only
// sms_spam) names the command that fetches it. Run where no data/trec exists.
TEST_F(SiftCli, MissingDataSetNamesGetDataCommand) {
  const std::string cwd = make_temp_dir("sift_cli_nodata");
  const Result r = sift("train " + quote(kSource + "/configs/trec.yaml") + " --quiet", "", cwd);
  EXPECT_TRUE(CleanError(
      r, {"data.train.path", "data/trec/TREC.train.all", "fetch it with tools/get_data.sh trec"}));
  // The label file is read first for AG News: it names the command too.
  const Result ag = sift("train " + quote(kSource + "/configs/ag_news.yaml") + " --quiet", "", cwd);
  EXPECT_TRUE(CleanError(ag, {"data/ag_news/", "fetch it with tools/get_data.sh ag_news"}));
  const Result glob = sift("train " + quote(kSmsConfig) +
                               " --quiet --set "
                               "data.train.path=[data/ag_news/*.tsv]",
                           "", cwd);
  EXPECT_TRUE(CleanError(glob, {"no file matches", "fetch it with tools/get_data.sh ag_news"}));
  fs::remove_all(cwd);
}

// ---------------------------------------------------------------------------------------
// Damaged or missing run folders.

TEST_F(SiftCli, CorruptedCheckpoint) {
  ASSERT_EQ(sms_run().train.status, 0) << sms_run().train;
  const std::string run = copy_of_sms_run(dir_);
  const std::string ckpt = run + "/best.ckpt";
  std::string bytes = read_file(ckpt);
  bytes[bytes.size() / 2] ^= 0x20;
  write_file(ckpt, bytes);
  EXPECT_TRUE(CleanError(sift("eval --model " + quote(run) + " --data " + quote(kSmsData)),
                         {ckpt, "checksum"}));
  EXPECT_TRUE(CleanError(sift("predict --model " + quote(run), "hello\n"), {ckpt, "checksum"}));
}

TEST_F(SiftCli, TruncatedCheckpoint) {
  ASSERT_EQ(sms_run().train.status, 0) << sms_run().train;
  const std::string run = copy_of_sms_run(dir_);
  const std::string ckpt = run + "/best.ckpt";
  const std::string bytes = read_file(ckpt);
  write_file(ckpt, bytes.substr(0, bytes.size() * 2 / 3));
  EXPECT_TRUE(CleanError(sift("eval --model " + quote(run) + " --data " + quote(kSmsData)),
                         {ckpt, "truncated"}));
  EXPECT_TRUE(CleanError(sift("predict --model " + quote(run), "hello\n"), {ckpt, "truncated"}));
}

TEST_F(SiftCli, NotACheckpoint) {
  ASSERT_EQ(sms_run().train.status, 0) << sms_run().train;
  const std::string run = copy_of_sms_run(dir_);
  write_file(run + "/best.ckpt", "PK\3\4 this is a zip, not ours");
  EXPECT_TRUE(CleanError(sift("predict --model " + quote(run), "hello\n"),
                         {run + "/best.ckpt", "is not a Sift checkpoint"}));
}

TEST_F(SiftCli, RunFolderWithoutCheckpoint) {
  ASSERT_EQ(sms_run().train.status, 0) << sms_run().train;
  const std::string run = copy_of_sms_run(dir_);
  fs::remove(run + "/best.ckpt");
  EXPECT_TRUE(CleanError(sift("predict --model " + quote(run), "hello\n"), {run}));
}

TEST_F(SiftCli, RunFolderWithDamagedVocabulary) {
  ASSERT_EQ(sms_run().train.status, 0) << sms_run().train;
  const std::string run = copy_of_sms_run(dir_);
  write_file(run + "/vocab.txt", "this is not a vocabulary\n");
  EXPECT_TRUE(CleanError(sift("predict --model " + quote(run), "hello\n"), {run + "/vocab.txt"}));
}

TEST_F(SiftCli, EvalOnAMissingRunFolder) {
  const std::string missing = dir_ + "/no_such_run";
  EXPECT_TRUE(CleanError(sift("eval --model " + quote(missing) + " --data " + quote(kSmsData)),
                         {missing, "not a run folder"}));
}

TEST_F(SiftCli, EvalWithAMissingDataFile) {
  ASSERT_EQ(sms_run().train.status, 0) << sms_run().train;
  const std::string missing = dir_ + "/absent.tsv";
  EXPECT_TRUE(CleanError(sift("eval --model " + quote(sms_run().dir) + " --data " + quote(missing)),
                         {missing}));
}

TEST_F(SiftCli, PredictOnAMissingInputFile) {
  ASSERT_EQ(sms_run().train.status, 0) << sms_run().train;
  const std::string missing = dir_ + "/absent.txt";
  EXPECT_TRUE(CleanError(
      sift("predict --model " + quote(sms_run().dir) + " --input " + quote(missing)), {missing}));
}

TEST_F(SiftCli, ModelOptionsThatDoNotMatchTheCheckpoint) {
  // The run's weights were trained with model.dim 10: a model built with another
  // dimension must be refused, not loaded with the checkpoint's shapes.
  ASSERT_EQ(sms_run().train.status, 0) << sms_run().train;
  const Result r = sift("eval --model " + quote(sms_run().dir) + " --set model.dim=20");
  // The file named is the one holding the weights: best.ckpt, or last.ckpt when best.ckpt
  // names last.ckpt's weights (the best validation was the last one).
  const bool best_names_last = r.err.find("/last.ckpt") != std::string::npos;
  EXPECT_TRUE(CleanError(
      r, {sms_run().dir + (best_names_last ? "/last.ckpt" : "/best.ckpt"), "do not fit"}));
}

// ---------------------------------------------------------------------------------------
// Help and config commands.

TEST_F(SiftCli, HelpOfEachCommandListsItsOptions) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"train", {"--set", "--json", "--quiet", "config"}},
      {"eval", {"--model", "--data", "--format", "--text", "--label", "--json", "--set"}},
      {"predict", {"--model", "--top-k", "--input", "--json"}},
      {"config", {"--dump", "--reference", "--set"}},
  };
  for (const auto& [command, options] : cases) {
    const Result r = sift(command + " --help");
    EXPECT_EQ(r.status, 0) << command << "\n" << r;
    for (const auto& o : options) {
      EXPECT_NE(r.out.find(o), std::string::npos) << command << " --help lacks " << o << "\n" << r;
    }
  }
}

TEST_F(SiftCli, UsageErrorsExitNonZero) {
  const Result none = sift("");
  EXPECT_NE(none.status, 0) << none;
  EXPECT_NE(none.err.find("subcommand"), std::string::npos) << none;
  const Result eval = sift("eval");  // --model is required
  EXPECT_NE(eval.status, 0) << eval;
  EXPECT_NE(eval.err.find("--model"), std::string::npos) << eval;
}

TEST_F(SiftCli, ConfigDumpLoadsBack) {
  const Result dump = sift("config configs/sms_spam.yaml --dump");
  ASSERT_EQ(dump.status, 0) << dump;
  const std::string path = dir_ + "/dumped.yaml";
  write_file(path, dump.out);
  const SiftConfig c = load_config(path);  // throws on any problem
  EXPECT_EQ(c.model.dim, 10);
  EXPECT_EQ(c.train.loss_reduction, LossReduction::sum);
  EXPECT_EQ(resolved_format(c, Split::train).format, FileFormat::tsv);
  const Result again = sift("config " + quote(path) + " --dump");
  ASSERT_EQ(again.status, 0) << again;
  // The same values; each line's "# ORIGIN" now names the dumped file.
  const auto values = [](const std::string& text) {
    return std::regex_replace(text, std::regex("  # [^\n]*"), "");
  };
  EXPECT_EQ(values(again.out), values(dump.out));
  EXPECT_NE(dump.out.find("dim: 10  # configs/sms_spam.yaml:"), std::string::npos) << dump.out;
}

TEST_F(SiftCli, ConfigDumpAppliesSet) {
  const Result r = sift("config configs/sms_spam.yaml --dump --set train.epochs=11");
  ASSERT_EQ(r.status, 0) << r;
  write_file(dir_ + "/d.yaml", r.out);
  EXPECT_EQ(load_config(dir_ + "/d.yaml").train.epochs, 11);
}

}  // namespace sift_cli_test
}  // namespace sift
