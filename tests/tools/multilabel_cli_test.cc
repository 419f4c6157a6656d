// Multi-label classification end to end, through the `sift` executable: a real training
// run on records built from AG News (two news items of different topics joined carry
// both topics), `sift eval` and `sift predict` on the result, and bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "datasets/line_reader.h"
#include "run_sift.h"

namespace sift {
namespace multilabel_cli_test {

namespace fs = std::filesystem;

// The first 3,000 lines of the AG News 10k training sample, gzip-compressed (see
// tests/data/README.md): "text<TAB>topic" lines.
const std::string kAgSample =
    std::string(SIFT_SOURCE_DIR) + "/tests/data/ag_news/train_sample_3000.tsv.gz";

std::vector<std::string> ag_sample_lines() {
  std::vector<std::string> lines;
  LineReader reader(kAgSample);
  for (std::string line; reader.next(line);) lines.push_back(line);
  return lines;
}

using testing::SiftResult;
using Result = SiftResult;

std::string read_file(const std::string& path) { return testing::slurp(path); }

using testing::lines_of;

class MultiLabelCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = sift::testing::make_temp_dir("sift_multilabel");
    base_ = write("base.yaml", "run: {dir: " + dir_ + ", threads: 1}\n");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  Result sift(const std::string& args, const std::string& input = "") const {
    return testing::run_sift(args, dir_, input);
  }

  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  // fastText lines from AG News lines [first, first + count): pairs of items joined,
  // labelled with both topics; every third record is a single item with one topic.
  std::string ag_multilabel(size_t first, size_t count) const {
    static const std::vector<std::string> all = ag_sample_lines();
    auto split = [](const std::string& line) {
      const size_t tab = line.rfind('\t');
      std::string label = line.substr(tab + 1);
      for (char& c : label) c = c == '/' ? '_' : c;  // Sci/Tech -> Sci_Tech
      return std::make_pair(line.substr(0, tab), label);
    };
    std::string out;
    for (size_t i = first, k = 0; i + 1 < first + count && i + 1 < all.size(); i += 2, ++k) {
      const auto [text_a, label_a] = split(all[i]);
      const auto [text_b, label_b] = split(all[i + 1]);
      if (k % 3 == 0) {
        out += "__label__" + label_a + " " + text_a + "\n";
      } else {
        out += "__label__" + label_a + " __label__" + label_b + " " + text_a + " " + text_b + "\n";
      }
    }
    return out;
  }

  std::string dir_, base_;  // base_: a config that only sets the run folder
};

::testing::AssertionResult CleanError(const Result& r, const std::vector<std::string>& wanted) {
  return testing::CleanSiftError(r, wanted);
}

TEST_F(MultiLabelCli, LearnsAgNewsTopicPairsAndEvalAndPredictAgree) {
  const std::string train = write("train.txt", ag_multilabel(0, 2400));
  const std::string test_text = ag_multilabel(2400, 600);
  const std::string test = write("test.txt", test_text);
  const std::string config = write("multi.yaml", R"(run: {dir: )" + dir_ + R"(, name: m, threads: 1}
data:
  train: {path: )" + train + R"(}
  test: {path: )" + test + R"(}
  multi_label: true
  valid_split: 0.1
model: {type: fasttext, dim: 20, ngrams: 2, buckets: 200000}
train:
  epochs: 20
  batch_size: 16
  loss_reduction: sum
  best_metric: micro_f1
  optimizer: {type: sgd, lr: 1.0}
  scheduler: {type: linear}
)");
  const Result r = sift("train " + config + " --json --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  const auto& t = summary["splits"]["test"];
  // Baseline: predicting all 4 topics for every record (recall 1).
  size_t labels = 0, records = 0;
  for (const auto& line : lines_of(test_text)) {
    ++records;
    for (size_t p = line.find("__label__"); p != std::string::npos; p = line.find("__label__", p + 1)) ++labels;
  }
  const double precision = static_cast<double>(labels) / (4.0 * records);
  const double baseline = 2 * precision / (1 + precision);
  // Measured on the 1,200 training records of the fixture, 20 epochs (10 epochs on 3,000
  // records before): micro-F1 0.753, subset accuracy 0.50, Hamming loss 0.177; baseline 0.588.
  EXPECT_GT(t["micro_f1"].get<double>(), 0.72) << r.out;
  EXPECT_GT(t["micro_f1"].get<double>(), baseline + 0.15) << r.out << "baseline " << baseline;
  EXPECT_GT(t["accuracy"].get<double>(), 0.4) << r.out;  // subset accuracy
  EXPECT_LT(t["hamming_loss"].get<double>(), 0.2) << r.out;
  EXPECT_EQ(t["examples"].get<int64_t>(), static_cast<int64_t>(records));

  const std::string run = dir_ + "/m";
  const auto report = nlohmann::json::parse(read_file(run + "/report.json"));
  EXPECT_EQ(report["splits"]["test"]["per_class"].size(), 4u);
  EXPECT_NE(read_file(run + "/report.txt").find("Hamming loss"), std::string::npos);
  EXPECT_NE(read_file(run + "/metrics.jsonl").find("valid_micro_f1"), std::string::npos);
  // The page shows a multi-label split's own figures, and no confusion matrix.
  const std::string html = read_file(run + "/report.html");
  for (const char* part : {"<th>subset accuracy</th>", "<th>micro-F1</th>", "<th>Hamming loss</th>",
                           "<th>micro precision</th>", "validation micro-F1"}) {
    EXPECT_NE(html.find(part), std::string::npos) << part;
  }
  EXPECT_EQ(html.find("id=\"confusion\""), std::string::npos);
  EXPECT_EQ(html.find("id=\"confused\""), std::string::npos);

  // sift eval on the same file reports the same figures.
  const Result e = sift("eval --model " + run + " --data " + test + " --json");
  ASSERT_EQ(e.status, 0) << e.err;
  const auto eval = nlohmann::json::parse(e.out)["splits"]["test"];
  EXPECT_DOUBLE_EQ(eval["micro_f1"].get<double>(), t["micro_f1"].get<double>());
  EXPECT_DOUBLE_EQ(eval["hamming_loss"].get<double>(), t["hamming_loss"].get<double>());
  const Result e_text = sift("eval --model " + run + " --data " + test);
  EXPECT_NE(e_text.out.find("micro-F1"), std::string::npos) << e_text.out;

  // sift predict: every label over the threshold, most probable first.
  std::string texts;
  std::vector<std::set<std::string>> truth;
  for (const auto& line : lines_of(test_text)) {
    if (truth.size() == 60) break;
    std::set<std::string> names;
    size_t pos = 0;
    while (line.compare(pos, 9, "__label__") == 0) {
      const size_t space = line.find(' ', pos);
      names.insert(line.substr(pos + 9, space - pos - 9));
      pos = space + 1;
    }
    truth.push_back(names);
    texts += line.substr(pos) + "\n";
  }
  const Result p = sift("predict --model " + run, texts);
  ASSERT_EQ(p.status, 0) << p.err;
  const auto out = lines_of(p.out);
  ASSERT_EQ(out.size(), truth.size());
  int exact = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    std::set<std::string> predicted;
    std::istringstream fields(out[i]);
    std::string name, prob;
    double previous = 1.0;
    while (std::getline(fields, name, '\t') && std::getline(fields, prob, '\t')) {
      const double v = std::stod(prob);
      EXPECT_GT(v, 0.5) << out[i];
      EXPECT_LE(v, previous) << out[i];
      previous = v;
      predicted.insert(name);
    }
    exact += predicted == truth[i];
  }
  EXPECT_GT(exact, 20) << p.out;  // subset accuracy about 0.5
  // A lower threshold prints at least as many labels per line; --json carries them too.
  const Result low = sift("predict --model " + run + " --threshold 0.01 --json", texts);
  ASSERT_EQ(low.status, 0) << low.err;
  const auto low_lines = lines_of(low.out);
  ASSERT_EQ(low_lines.size(), truth.size());
  size_t more = 0;
  for (size_t i = 0; i < low_lines.size(); ++i) {
    const auto j = nlohmann::json::parse(low_lines[i]);
    const size_t fields = out[i].empty() ? 0 : std::count(out[i].begin(), out[i].end(), '\t') / 2 + 1;
    EXPECT_GE(j["predictions"].size(), fields);
    more += j["predictions"].size() > fields;
  }
  EXPECT_GT(more, 0u);
}

TEST_F(MultiLabelCli, LabelListInSingleLabelModeNamesFileLineAndOption) {
  const std::string data = write("d.txt",
                                 "__label__a first text\n__label__b second text\n"
                                 "__label__a __label__b third text\n");
  const Result r = sift("train " + base_ + " --quiet --set data.train.path=" + data);
  EXPECT_TRUE(CleanError(r, {data + ":3:", "2 labels (a, b)", "data.multi_label: true"}));
  // A TSV label column split by data.label_separator, likewise.
  const std::string tsv = write("d.tsv", "a\tfirst\nb\tsecond\na|b\tthird\n");
  const std::string config = write("tsv.yaml", "run: {dir: " + dir_ + "}\ndata:\n  train: {path: " +
                                                    tsv + "}\n  format: tsv\n  text: [1]\n  label: 0\n"
                                                    "  label_separator: \"|\"\n");
  const Result t = sift("train " + config + " --quiet");
  EXPECT_TRUE(CleanError(t, {tsv + ":3:", "data.multi_label"}));
}

TEST_F(MultiLabelCli, MultiLabelOptionsAreChecked) {
  const std::string data = write("d.txt", "__label__a one\n__label__b two\n");
  const Result metric = sift("train " + base_ + " --quiet --set data.train.path=" + data +
                             " --set train.best_metric=micro_f1");
  EXPECT_TRUE(CleanError(metric, {"train.best_metric", "data.multi_label"}));
  const Result threshold = sift("train " + base_ + " --quiet --set data.train.path=" + data +
                                " --set data.multi_label=true --set train.threshold=1.5");
  EXPECT_TRUE(CleanError(threshold, {"train.threshold"}));
}

}  // namespace multilabel_cli_test
}  // namespace sift
