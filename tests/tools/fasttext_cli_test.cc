// Users of fastText at home (issue #41): fastText's command line on Sift against the
// `fasttext` CLI on the same files, predict's output formats, the defaults a config of data
// paths alone trains with, and usage errors' exit status 2.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "tests/tools/run_sift.h"

namespace sift::testing {
namespace fasttext_cli_test {

const std::string kSource = SIFT_SOURCE_DIR;
const std::string kTrec = kSource + "/tests/data/trec/";

bool have_fasttext() { return std::system("command -v fasttext >/dev/null 2>&1") == 0; }

// The TREC cut ("LABEL text", Latin-1 bytes) as fastText's "__label__LABEL text".
void write_trec_fasttext(const std::string& from, const std::string& to) {
  std::ifstream in(kTrec + from, std::ios::binary);
  std::ofstream out(to, std::ios::binary);
  std::string line;
  while (std::getline(in, line)) out << "__label__" << line << "\n";
}

// `N`, `P@1` and `R@1` of `fasttext test` (or `sift test`) output.
std::map<std::string, double> test_lines(const std::string& out) {
  std::map<std::string, double> values;
  std::istringstream in(out);
  std::string name;
  double value;
  while (in >> name >> value) values[name] = value;
  return values;
}

class FastTextCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_fasttext()) GTEST_SKIP() << "the fasttext CLI is not installed (tools/setup.sh)";
    dir_ = make_temp_dir("fasttext_cli");
    write_trec_fasttext("TREC.train.sample", path("train.txt"));
    write_trec_fasttext("TREC.test.sample", path("test.txt"));
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  SiftResult sift(const std::string& args) const { return run_sift(args, dir_, "", dir_); }
  SiftResult fasttext(const std::string& args) const {
    return run_command("fasttext " + args, dir_, "", dir_);
  }
  std::string dir_;
};

// Settings that learn on 600 questions, given to both programs as fastText flags.
const std::string kFlags = " -epoch 25 -lr 0.5 -wordNgrams 2 -dim 10 -bucket 20000 -seed 3";

TEST_F(FastTextCli, SupervisedAndTestGiveFastTextsFiguresOnTheSameFiles) {
  ASSERT_EQ(fasttext("supervised -input train.txt -output ft -thread 1 -verbose 0" + kFlags).status,
            0);
  const SiftResult trained =
      sift("supervised -input train.txt -output runs/ft -verbose 0" + kFlags);
  ASSERT_EQ(trained.status, 0) << trained;
  const SiftResult theirs = fasttext("test ft.bin test.txt 1");
  const SiftResult ours = sift("test runs/ft test.txt 1");
  ASSERT_EQ(ours.status, 0) << ours;
  const auto a = test_lines(theirs.out), b = test_lines(ours.out);
  // fastText's three lines, in its layout.
  EXPECT_TRUE(std::regex_match(ours.out, std::regex("N\t100\nP@1\t[0-9.]+\nR@1\t[0-9.]+\n")))
      << ours;
  EXPECT_EQ(b.at("N"), 100);
  // Hogwild and file order against one thread and a shuffle: the same figures within a
  // few questions of 100.
  EXPECT_NEAR(b.at("P@1"), a.at("P@1"), 0.06) << theirs.out << ours.out;
  EXPECT_GT(b.at("P@1"), 0.5);
}

TEST_F(FastTextCli, PredictAndPredictProbWriteFastTextsLines) {
  ASSERT_EQ(sift("supervised -input train.txt -output runs/ft -verbose 0" + kFlags).status, 0);
  const SiftResult labels = sift("predict runs/ft test.txt 2");
  ASSERT_EQ(labels.status, 0) << labels;
  const SiftResult probs = sift("predict-prob runs/ft test.txt 2");
  ASSERT_EQ(probs.status, 0) << probs;
  std::istringstream l(labels.out), p(probs.out);
  std::string label_line, prob_line;
  int lines = 0;
  const std::regex label_form("__label__[0-9] __label__[0-9]");
  const std::regex prob_form("(__label__[0-9]) ([0-9.e-]+) (__label__[0-9]) ([0-9.e-]+)");
  while (std::getline(l, label_line) && std::getline(p, prob_line)) {
    ++lines;
    EXPECT_TRUE(std::regex_match(label_line, label_form)) << label_line;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(prob_line, m, prob_form)) << prob_line;
    EXPECT_EQ(label_line, m[1].str() + " " + m[3].str());
    EXPECT_GE(std::stod(m[2]), std::stod(m[4]));
  }
  EXPECT_EQ(lines, 100);
  // The same run through Sift's own flags: the top label of each line agrees.
  const SiftResult tsv = sift("predict --model runs/ft --input test.txt --labels-only");
  std::istringstream t(tsv.out), l2(labels.out);
  std::string tsv_line;
  while (std::getline(t, tsv_line) && std::getline(l2, label_line)) {
    EXPECT_EQ("__label__" + tsv_line, label_line.substr(0, label_line.find(' ')));
  }
}

TEST_F(FastTextCli, ItsFlagsBecomeSiftKeysAndDumpConfigWritesTheYamlItRan) {
  const SiftResult r = sift(
      "supervised -input train.txt -output runs/ft -verbose 0 -ws 7 "
      "-lrUpdateRate 50 -dump-config ran.yaml" +
      kFlags);
  ASSERT_EQ(r.status, 0) << r;
  const std::string ran = slurp(path("ran.yaml"));
  for (const std::string wanted :
       {"ngrams: 2  # --set model.ngrams", "dim: 10  # --set model.dim",
        "lr: 0.5  # --set train.optimizer.lr", "epochs: 25  # --set train.epochs",
        "fasttext_compat: true  # --set tokenizer.fasttext_compat",
        "batch_size: 1  # model default (fasttext)"}) {
    EXPECT_NE(ran.find(wanted), std::string::npos) << wanted << "\n" << ran;
  }
  // The YAML trains again as it stands.
  const SiftResult again = sift("train ran.yaml --quiet --set run.name=again");
  EXPECT_EQ(again.status, 0) << again;
}

TEST_F(FastTextCli, UnknownAndUnsupportedFlagsAreUsageErrorsThatSayWhy) {
  const SiftResult typo = sift("supervised -input train.txt -output m -wordNgram 2");
  EXPECT_EQ(typo.status, 2) << typo;
  EXPECT_TRUE(CleanSiftError(typo, {"-wordNgram", "did you mean -wordNgrams?"}));
  const SiftResult label = sift("supervised -input train.txt -output m -minCountLabel 2");
  EXPECT_EQ(label.status, 2) << label;
  EXPECT_TRUE(CleanSiftError(label, {"-minCountLabel", "not supported"}));
  const SiftResult missing = sift("supervised -input train.txt");
  EXPECT_EQ(missing.status, 2) << missing;
  EXPECT_TRUE(CleanSiftError(missing, {"-output"}));
  ASSERT_EQ(fasttext("supervised -input train.txt -output ft -epoch 1 -verbose 0").status, 0);
  const SiftResult bin = sift("test ft.bin test.txt");
  EXPECT_EQ(bin.status, 2) << bin;
  EXPECT_TRUE(CleanSiftError(bin, {"sift import fasttext ft.bin"}));
}

// The first word of each line of `out` (a label of predict or predict-prob).
std::vector<std::string> first_words(const std::string& out) {
  std::vector<std::string> words;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) words.push_back(line.substr(0, line.find(' ')));
  return words;
}

// fastText's -label: the files mark labels with another prefix; both programs train on
// them, Sift's predict writes that prefix, and a fastText model trained with it imports
// once `--label` names it (its file does not keep it).
TEST_F(FastTextCli, ALabelPrefixOfItsOwnTrainsPredictsAndImportsAsFastTextDoes) {
  for (const std::string name : {"train", "test"}) {
    std::ifstream in(path(name + ".txt"));
    std::ofstream out(path(name + "_lbl.txt"));
    std::string line;
    while (std::getline(in, line)) out << "__lbl__" << line.substr(9) << "\n";
  }
  const std::string flags = " -label __lbl__ -verbose 0 -thread 1" + kFlags;
  ASSERT_EQ(fasttext("supervised -input train_lbl.txt -output ft" + flags).status, 0);
  const SiftResult trained = sift("supervised -input train_lbl.txt -output runs/lbl" + flags);
  ASSERT_EQ(trained.status, 0) << trained;
  const auto a = test_lines(fasttext("test ft.bin test_lbl.txt 1").out);
  const SiftResult ours = sift("test runs/lbl test_lbl.txt 1");
  ASSERT_EQ(ours.status, 0) << ours;
  const auto b = test_lines(ours.out);
  EXPECT_EQ(b.at("N"), 100);
  EXPECT_NEAR(b.at("P@1"), a.at("P@1"), 0.06) << ours.out;
  const SiftResult predicted = sift("predict runs/lbl test_lbl.txt 1");
  ASSERT_EQ(predicted.status, 0) << predicted;
  const auto labels = first_words(predicted.out);
  ASSERT_EQ(labels.size(), 100u);
  for (const auto& l : labels) EXPECT_TRUE(std::regex_match(l, std::regex("__lbl__[0-9]"))) << l;

  const SiftResult unnamed = sift("import fasttext ft.bin --out imported");
  EXPECT_EQ(unnamed.status, 1) << unnamed;
  EXPECT_TRUE(CleanSiftError(unnamed, {"does not start with __label__", "--label"}));
  const SiftResult imported = sift("import fasttext ft.bin --out imported --force --label __lbl__");
  ASSERT_EQ(imported.status, 0) << imported;
  const SiftResult theirs = fasttext("predict-prob ft.bin test_lbl.txt 1");
  const SiftResult mine = sift("predict-prob imported test_lbl.txt 1");
  ASSERT_EQ(mine.status, 0) << mine;
  EXPECT_EQ(first_words(mine.out), first_words(theirs.out));
}

// fastText's autotune flags run `sift tune`: -output is the search folder, whose tune.json
// names the winning model; the search keeps to -autotune-duration. The validation file is
// the training sample's last 100 questions (the test file is never searched on).
TEST_F(FastTextCli, AutotuneFlagsSearchWithinTheDurationAndNameTheWinningModel) {
  {
    std::ifstream in(path("train.txt"));
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::ofstream train(path("fit.txt")), valid(path("valid.txt"));
    for (size_t i = 0; i < lines.size(); ++i)
      (i + 100 < lines.size() ? train : valid) << lines[i] << "\n";
  }
  const SiftResult alone = sift("supervised -input fit.txt -output s -autotune-duration 10");
  EXPECT_EQ(alone.status, 2) << alone;
  EXPECT_TRUE(CleanSiftError(alone, {"-autotune-validation"}));
  const auto start = std::chrono::steady_clock::now();
  const SiftResult searched = sift(
      "supervised -input fit.txt -output search -autotune-validation valid.txt "
      "-autotune-duration 15 -verbose 0");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(searched.status, 0) << searched;
  EXPECT_LT(seconds, 15 * 1.05 + 5) << "the search overran -autotune-duration";
  std::ifstream summary_file(path("search/tune.json"));
  const auto summary = nlohmann::json::parse(summary_file);
  const std::string model = summary.at("best").at("model").get<std::string>();
  EXPECT_EQ(summary.at("budget_seconds").get<double>(), 15.0) << summary.dump(2);
  const SiftResult tested = sift("test " + model + " test.txt 1");
  ASSERT_EQ(tested.status, 0) << tested;
  EXPECT_GT(test_lines(tested.out).at("P@1"), 0.5) << tested.out;
}

// fastText's quantize: -input, -epoch and -lr are -retrain's (its data, epochs and rate);
// without -retrain they are read and ignored, as fastText does.
TEST_F(FastTextCli, QuantizeRetrainsWithItsInputEpochAndLr) {
  ASSERT_EQ(sift("supervised -input train.txt -output runs/q -verbose 0" + kFlags).status, 0);
  const SiftResult plain = sift("quantize -output runs/q -cutoff 500 -epoch 3 -lr 0.1");
  ASSERT_EQ(plain.status, 0) << plain;
  EXPECT_EQ(plain.out.find("retrained"), std::string::npos) << plain;
  const SiftResult retrained =
      sift("quantize -output runs/q -input train.txt -cutoff 500 -retrain -epoch 3 -lr 0.1");
  ASSERT_EQ(retrained.status, 0) << retrained;
  EXPECT_CONTAINS(retrained.out + retrained.err, "output layer and kept rows for 3 epochs");
  const SiftResult tested = sift("test runs/q.ftz test.txt 1");
  ASSERT_EQ(tested.status, 0) << tested;
  EXPECT_GT(test_lines(tested.out).at("P@1"), 0.5) << tested.out;
}

// fastText's -pretrainedVectors: the file's words join the vocabulary, the words found start
// from their vectors and the run
// trains and predicts (in sift-main: LiteOptions.AKeyNotHonouredIsTheReason); a file of
// another dimension is refused naming it.
TEST_F(FastTextCli, PretrainedVectorsStartTheWordsFoundAndAWrongDimensionIsNamed) {
  {
    std::ofstream vec(path("v.vec"));
    vec << "4 10\n";
    for (const char* word : {"What", "Who", "How", "zyxwvutsrq"}) {
      vec << word;
      for (int i = 0; i < 10; ++i) vec << " " << (i % 3 == 0 ? 0.5 : -0.25);
      vec << "\n";
    }
  }
  const SiftResult trained =
      sift("supervised -input train.txt -output runs/pv -pretrainedVectors v.vec" + kFlags);
  ASSERT_EQ(trained.status, 0) << trained;
  const SiftResult tested = sift("test runs/pv test.txt 1");
  ASSERT_EQ(tested.status, 0) << tested;
  EXPECT_GT(test_lines(tested.out).at("P@1"), 0.5) << tested.out;
  // As fastText adds them: a word of the file that the training data lacks joins the
  // vocabulary, with no training count, and the model knows it.
  EXPECT_CONTAINS(slurp(path("runs/pv/vocab.txt")), "\nzyxwvutsrq\t0\n");
  EXPECT_EQ(slurp(path("runs/pv/vocab.txt")).find("\nWhat\t0\n"), std::string::npos);
  const SiftResult wrong =
      sift("supervised -input train.txt -output runs/pv5 -pretrainedVectors v.vec -dim 5");
  EXPECT_NE(wrong.status, 0) << wrong;
  EXPECT_TRUE(CleanSiftError(wrong, {"v.vec:1", "10 dimensions, model.dim is 5"}));
}

// Label and probability pairs of `fasttext predict-prob` lines.
std::vector<std::vector<std::pair<std::string, double>>> prob_lines(const std::string& out) {
  std::vector<std::vector<std::pair<std::string, double>>> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string label;
    double p;
    lines.emplace_back();
    while (words >> label >> p) lines.back().emplace_back(label, p);
  }
  return lines;
}

// Character n-grams (-minn/-maxn): a fastText model that has them imports, and Sift's
// forward (its subword hashing included, non-ASCII words and words it never saw among
// them) gives `fasttext predict-prob`'s labels and probabilities.
TEST_F(FastTextCli, ImportedCharNgramModelsPredictAsFastTextDoes) {
  std::ofstream(path("test.txt"), std::ios::app)
      << "__label__1 Ce înseamnă cuvântul «Straße» în germană ?\n"
      << "__label__4 Cât de departe este Luna de Pământ ?\n"
      << "__label__2 Whoo wass Galilleo ?\n";
  ASSERT_EQ(fasttext("supervised -input train.txt -output ft -minn 2 -maxn 5 -wordNgrams 2 "
                     "-bucket 50000 -dim 10 -epoch 10 -lr 0.5 -thread 1 -verbose 0")
                .status,
            0);
  const SiftResult imported = sift("import fasttext ft.bin --out runs/imported");
  ASSERT_EQ(imported.status, 0) << imported;
  const std::string config = slurp(path("runs/imported/config.yaml"));
  EXPECT_NE(config.find("minn: 2"), std::string::npos) << config;
  EXPECT_NE(config.find("maxn: 5"), std::string::npos) << config;
  const auto theirs = prob_lines(fasttext("predict-prob ft.bin test.txt 3").out);
  const SiftResult ours_out = sift("predict-prob runs/imported test.txt 3");
  ASSERT_EQ(ours_out.status, 0) << ours_out;
  const auto ours = prob_lines(ours_out.out);
  ASSERT_EQ(ours.size(), theirs.size());
  ASSERT_EQ(ours.size(), 103u);
  for (size_t i = 0; i < ours.size(); ++i) {
    ASSERT_EQ(ours[i].size(), theirs[i].size()) << "line " << i;
    for (size_t j = 0; j < ours[i].size(); ++j) {
      // Ties in probability may come in either order; the probabilities must agree.
      EXPECT_NEAR(ours[i][j].second, theirs[i][j].second, 1e-4) << "line " << i;
      if (std::abs(ours[i][j].second - theirs[i][j].second) < 1e-4 && j == 0 &&
          (ours[i].size() < 2 || ours[i][0].second - ours[i][1].second > 1e-4)) {
        EXPECT_EQ(ours[i][j].first, theirs[i][j].first) << "line " << i;
      }
    }
  }
  // Sift's own training with the same flags reads subwords as well and learns.
  const SiftResult trained = sift(
      "supervised -input train.txt -output runs/chars -minn 2 "
      "-maxn 5 -verbose 0" +
      kFlags);
  ASSERT_EQ(trained.status, 0) << trained;
  const auto ours_test = test_lines(sift("test runs/chars test.txt 1").out);
  EXPECT_GT(ours_test.at("P@1"), 0.5);
}

// Usage errors exit with 2, as argument parsers' do; errors while running stay 1.
TEST(UsageErrors, ExitTwoAndNameTheOptionWhicheverProgramRuns) {
  const std::string dir = make_temp_dir("usage_errors");
  const std::string run = dir + "/runs/ft";
  const SiftResult trained =
      run_sift("train --quiet --set data.train.path=" + quote(kTrec + "TREC.train.sample") +
                   " --set data.format=label_first --set data.encoding=latin-1 --set train.epochs=1"
                   " --set run.dir=" +
                   quote(dir + "/runs") + " --set run.name=ft",
               dir);
  ASSERT_EQ(trained.status, 0) << trained;
  for (const char* lite : {"1", "0"}) {  // sift-lite's predict, and sift-main's
    const std::string env = std::string("SIFT_LITE=") + lite + " ";
    const SiftResult k0 = run_command(
        env + quote(SIFT_BINARY) + " predict --model " + quote(run) + " --top-k 0", dir, "a\n");
    EXPECT_EQ(k0.status, 2) << k0;
    EXPECT_TRUE(CleanSiftError(k0, {"--top-k"}));
    const SiftResult both = run_command(env + quote(SIFT_BINARY) + " predict --model " +
                                            quote(run) + " --format fasttext --labels-only",
                                        dir, "a\n");
    EXPECT_EQ(both.status, 2) << both;
  }
  const SiftResult key = run_sift("train --set data.train.path=x --set train.epoch=3", dir);
  EXPECT_EQ(key.status, 2) << key;
  EXPECT_TRUE(CleanSiftError(key, {"train.epoch", "did you mean 'train.epochs'"}));
  const SiftResult flag = run_sift("predict --model " + quote(run) + " --top_k 3", dir, "a\n");
  EXPECT_EQ(flag.status, 2) << flag;
  EXPECT_TRUE(CleanSiftError(flag, {"--top_k", "did you mean '--top-k'?"}));
  const SiftResult eval_k = run_sift("eval --model " + quote(run) + " --k -1", dir);
  EXPECT_EQ(eval_k.status, 2) << eval_k;
  const SiftResult range = run_sift("train --set data.train.path=x --set train.epochs=0", dir);
  EXPECT_EQ(range.status, 2) << range;
  const SiftResult absent = run_sift("train --quiet --set data.train.path=/nonexistent/t.txt", dir);
  EXPECT_EQ(absent.status, 1) << absent;  // a file that is not there: an error while running
}

TEST(PredictFormats, TsvLabelsOnlyJsonAndFastTextAgreeOnTheLabels) {
  const std::string dir = make_temp_dir("predict_formats");
  const SiftResult trained =
      run_sift("train --quiet --set data.train.path=" + quote(kTrec + "TREC.train.sample") +
                   " --set data.format=label_first --set data.encoding=latin-1 --set run.dir=" +
                   quote(dir + "/runs") + " --set run.name=ft",
               dir);
  ASSERT_EQ(trained.status, 0) << trained;
  const std::string model = " --model " + quote(dir + "/runs/ft") + " --top-k 2 ";
  const std::string texts = "Who was Galileo ?\nHow far is the moon ?\n";
  const SiftResult tsv = run_sift("predict" + model, dir, texts);
  const SiftResult only = run_sift("predict" + model + "--labels-only", dir, texts);
  const SiftResult json = run_sift("predict" + model + "--format json", dir, texts);
  const SiftResult ft = run_sift("predict" + model + "--format fasttext", dir, texts);
  const SiftResult prob = run_sift("predict" + model + "--format fasttext-prob", dir, texts);
  for (const SiftResult* r : {&tsv, &only, &json, &ft, &prob}) ASSERT_EQ(r->status, 0) << *r;
  std::istringstream a(tsv.out), b(only.out), c(json.out), d(ft.out), e(prob.out);
  std::string la, lb, lc, ld, le;
  int lines = 0;
  while (std::getline(a, la) && std::getline(b, lb) && std::getline(c, lc) && std::getline(d, ld) &&
         std::getline(e, le)) {
    ++lines;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(la, m, std::regex("(\\S+)\t([0-9.]+)\t(\\S+)\t([0-9.]+)"))) << la;
    EXPECT_EQ(lb, m[1].str() + "\t" + m[3].str());
    EXPECT_EQ(ld, "__label__" + m[1].str() + " __label__" + m[3].str());
    EXPECT_EQ(le.substr(0, le.find(' ')), "__label__" + m[1].str());
    EXPECT_NE(lc.find("\"label\":\"" + m[1].str() + "\""), std::string::npos) << lc;
  }
  EXPECT_EQ(lines, 2);
}

// data/sms_spam's "label<TAB>text" lines as fastText's, the first `split` to train.txt
// and the rest to test.txt.
void write_sms_fasttext(const std::string& dir, size_t split) {
  std::ifstream in(kSource + "/data/sms_spam/SMSSpamCollection");
  std::ofstream train(dir + "/train.txt"), test(dir + "/test.txt");
  std::string line;
  for (size_t i = 0; std::getline(in, line); ++i) {
    const size_t tab = line.find('\t');
    (i < split ? train : test) << "__label__" << line.substr(0, tab) << " " << line.substr(tab + 1)
                               << "\n";
  }
}

// A config of data paths alone trains the fastText model with its own defaults (batch 1,
// summed loss, linear decay, every line trains: fastText's step), and learns as `fasttext
// supervised` with its defaults does on the same files; the trap those defaults replace
// is warned of.
TEST(ModelDefaults, DataPathsAloneLearnAsFastTextsDefaultsDo) {
  if (!have_fasttext()) GTEST_SKIP() << "the fasttext CLI is not installed";
  const std::string dir = make_temp_dir("model_defaults");
  write_sms_fasttext(dir, 4500);
  const SiftResult config = run_sift("config --dump --set data.train.path=train.txt", dir, "", dir);
  EXPECT_NE(config.out.find("batch_size: 1  # model default (fasttext)"), std::string::npos)
      << config;
  EXPECT_NE(config.out.find("path:  # --set data.train.path"), std::string::npos) << config;
  EXPECT_NE(config.out.find("epochs: 5  # default"), std::string::npos) << config;
  const SiftResult ours =
      run_sift("train --json --quiet --set data.train.path=train.txt --set data.test.path=test.txt",
               dir, "", dir);
  ASSERT_EQ(ours.status, 0) << ours;
  EXPECT_EQ(ours.err.find("warning"), std::string::npos) << ours;
  const double accuracy = nlohmann::json::parse(ours.out)["splits"]["test"]["accuracy"];
  ASSERT_EQ(run_command("fasttext supervised -input train.txt -output ft -thread 1 -verbose 0", dir,
                        "", dir)
                .status,
            0);
  const auto theirs = test_lines(run_command("fasttext test ft.bin test.txt", dir, "", dir).out);
  // 1,074 test lines, one run each: within a point (0.980 and 0.980 when measured). The
  // table's old defaults, batch 32 and mean at lr 0.1, stayed at the majority class, 0.869.
  EXPECT_GT(accuracy, theirs.at("P@1") - 0.01) << ours.out;
  EXPECT_GT(accuracy, 0.95);
  const SiftResult trap = run_sift(
      "train --quiet --set data.train.path=train.txt --set train.batch_size=32 "
      "--set train.loss_reduction=mean --set train.epochs=1 --set run.name=trap",
      dir, "", dir);
  ASSERT_EQ(trap.status, 0) << trap;
  EXPECT_NE(trap.err.find("sift: warning: train.loss_reduction: mean"), std::string::npos) << trap;
}

}  // namespace fasttext_cli_test
}  // namespace sift::testing
