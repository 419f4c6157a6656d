// `sift import hf` of a tiny random BERT folder that the test writes, then `sift predict`
// of the run: its probabilities equal the softmax of an independent Python forward
// (tests/models/bert_reference.py) over the WordPiece ids of the same texts. ALBERT and
// XLM-R folders likewise, the reference tokenizing with their SentencePiece models; then
// export, eval and fine-tuning of those.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "datasets/wordpiece.h"
#include "tests/hf_folder.h"
#include "tests/test_files.h"
#include "tests/tools/run_sift.h"

namespace sift {
namespace import_hf_cli_test {

using nlohmann::json;
using sift::testing::hf_folder;
using sift::testing::make_temp_dir;
using sift::testing::quote;
using sift::testing::run_sift;
using sift::testing::SiftResult;
using sift::testing::slurp;
using sift::testing::write_file;

const std::vector<std::string> kTexts{"w5 w17 w33", "W9, w44!", "w12", ""};

// The softmax of each row of the reference's logits.
std::vector<std::vector<double>> softmax_rows(const json& logits) {
  std::vector<std::vector<double>> probs;
  for (const auto& row : logits) {
    std::vector<double> p;
    double sum = 0, top = -1e300;
    for (double v : row) top = std::max(top, v);
    for (double v : row) sum += std::exp(v - top);
    for (double v : row) p.push_back(std::exp(v - top) / sum);
    probs.push_back(p);
  }
  return probs;
}

// The reference's softmax over each text's [CLS] ids [SEP], padded with [PAD].
std::vector<std::vector<double>> reference_probabilities(const std::string& folder) {
  const WordPieceTokenizer tokenizer(WordPieceVocab::load(folder + "/vocab.txt"));
  json input{{"ids", json::array()}, {"lengths", json::array()}};
  size_t longest = 0;
  std::vector<std::vector<int32_t>> rows;
  for (const std::string& t : kTexts) {
    rows.push_back(tokenizer.encode(t, 40));
    longest = std::max(longest, rows.back().size());
  }
  for (auto& r : rows) {
    input["lengths"].push_back(r.size());
    r.resize(longest, 0);
    input["ids"].push_back(r);
  }
  write_file(folder + "/input.json", input.dump());
  const std::string out = folder + "/logits.json";
  const std::string cmd = "/usr/bin/python3 " + std::string(SIFT_SOURCE_DIR) +
                          "/tests/models/bert_reference.py " + folder + " " + folder +
                          "/input.json > " + out;
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return softmax_rows(json::parse(slurp(out)));
}

TEST(ImportHfCli, AnImportedBertPredictsThePythonReferenceProbabilities) {
  const std::string folder = hf_folder("bert");
  const std::string dir = make_temp_dir("sift_import_hf"), run = dir + "/run";
  const SiftResult imported = run_sift("import hf " + quote(folder) + " --out " + quote(run), dir);
  ASSERT_EQ(imported.status, 0) << imported;
  EXPECT_CONTAINS(imported.out, "(bert): 2 layers, dim 32, 4 heads, 50 WordPiece tokens, 3 labels");
  std::string input;
  for (const std::string& t : kTexts) input += t + "\n";
  const SiftResult predicted =
      run_sift("predict --model " + quote(run) + " --json --top-k 3", dir, input);
  ASSERT_EQ(predicted.status, 0) << predicted;
  const auto want = reference_probabilities(folder);
  const std::vector<std::string> labels{"neg", "neu", "pos"};
  const auto lines = sift::testing::lines_of(predicted.out);
  ASSERT_EQ(lines.size(), kTexts.size()) << predicted;
  for (size_t i = 0; i < lines.size(); ++i) {
    const json got = json::parse(lines[i]);
    ASSERT_EQ(got["predictions"].size(), 3u) << lines[i];
    for (const auto& p : got["predictions"]) {
      const size_t label = static_cast<size_t>(
          std::find(labels.begin(), labels.end(), p["label"].get<std::string>()) - labels.begin());
      ASSERT_LT(label, 3u) << lines[i];
      EXPECT_NEAR(p["score"].get<double>(), want[i][label], 1e-4) << kTexts[i];
    }
  }
}

TEST(ImportHfCli, RefusalsAreOneLineNamingWhatIsWrong) {
  const std::string folder = hf_folder("distilbert");
  const std::string dir = make_temp_dir("sift_import_hf_refuse");
  const SiftResult labels =
      run_sift("import hf " + quote(folder) + " --labels a,b --out " + quote(dir + "/run"), dir);
  EXPECT_EQ(labels.status, 1) << labels;
  EXPECT_EQ(labels.err, "sift: error: --labels: 2 labels, the folder's head has 3\n");
  json config = json::parse(slurp(folder + "/config.json"));
  // CamemBERT and RoBERTa: each names what is missing, in one line.
  for (const auto& [model_type, missing] : std::vector<std::pair<std::string, std::string>>{
           {"camembert", "CamemBERT's own fairseq ids"},
           {"roberta", "a byte-level BPE tokenizer"}}) {
    config["model_type"] = model_type;
    write_file(folder + "/config.json", config.dump());
    const SiftResult r =
        run_sift("import hf " + quote(folder) + " --out " + quote(dir + "/run"), dir);
    EXPECT_EQ(r.status, 1) << r;
    EXPECT_CONTAINS(
        r.err, "model_type \"" + model_type + "\" is not supported yet: Sift lacks " + missing);
    EXPECT_EQ(sift::testing::lines_of(r.err).size(), 1u) << r;
  }
}

// ALBERT and XLM-R (SentencePiece through the plug-in; tests/hf_folder.h): `sift import
// hf`, then `sift predict` of the run gives the probabilities of the Python reference,
// which tokenizes the texts itself as AlbertTokenizer and XLMRobertaTokenizer do; `sift
// eval` reads labelled text; the export, in `sift predict` and in Python alone
// (examples/classify.py), gives the run's probabilities; fine-tuning (train.init_from, two
// epochs) learns a task.
class ImportPiecesCli : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string skip = sift::testing::no_sentencepiece();
    if (!skip.empty()) GTEST_SKIP() << skip;
    albert_ = GetParam() == "albert";
    folder_ = albert_ ? sift::testing::albert_folder() : sift::testing::xlmr_folder();
    dir_ = make_temp_dir("sift_import_pieces");
  }

  SiftResult sift(const std::string& args, const std::string& input = "") {
    return run_sift(args, dir_, input, dir_);
  }

  // Each text's probabilities in label order (neg, neu, pos) from `predict --json`.
  std::vector<std::vector<double>> predicted(const std::string& model, bool python = false) {
    std::string input;
    for (const std::string& t : texts_) input += t + "\n";
    const std::string args = quote(model) + " --json --top-k 3";
    const SiftResult r =
        python ? sift::testing::run_command(
                     "/usr/bin/python3 " +
                         quote(std::string(SIFT_SOURCE_DIR) + "/examples/classify.py") + " " + args,
                     dir_, input, dir_)
               : sift("predict --model " + args, input);
    EXPECT_EQ(r.status, 0) << r;
    std::vector<std::vector<double>> rows;
    for (const auto& line : sift::testing::lines_of(r.out)) {
      std::vector<double> row(3, -1.0);
      const json parsed = json::parse(line);  // kept: the loop reads into it
      for (const auto& p : parsed.at("predictions")) {
        const std::string label = p["label"].get<std::string>();
        row[label == "neg" ? 0 : label == "neu" ? 1 : 2] = p["score"].get<double>();
      }
      rows.push_back(row);
    }
    return rows;
  }

  std::vector<std::vector<double>> reference() {
    write_file(dir_ + "/texts.json", json{{"texts", texts_}}.dump());
    const std::string out = dir_ + "/logits.json";
    const SiftResult r = sift::testing::run_command(
        "/usr/bin/python3 " + std::string(SIFT_SOURCE_DIR) + "/tests/models/bert_reference.py " +
            quote(folder_) + " " + quote(dir_ + "/texts.json"),
        dir_);
    EXPECT_EQ(r.status, 0) << r;
    return softmax_rows(json::parse(r.out));
  }

  static void expect_near(const std::vector<std::vector<double>>& a,
                          const std::vector<std::vector<double>>& b, double tolerance,
                          const std::string& what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    for (size_t i = 0; i < a.size(); ++i) {
      for (size_t k = 0; k < 3; ++k) EXPECT_NEAR(a[i][k], b[i][k], tolerance) << what << " " << i;
    }
  }

  bool albert_ = false;
  std::string folder_, dir_;
  const std::vector<std::string> texts_{"The film was GREAT!", "in 1999, the café  was naïve",
                                        "``quoted'' 2,000 ACTORS 字", ""};
};

TEST_P(ImportPiecesCli, PredictsThePythonReferenceAndExportsAlike) {
  const std::string run = dir_ + "/run";
  const SiftResult imported = sift("import hf " + quote(folder_) + " --out " + quote(run));
  ASSERT_EQ(imported.status, 0) << imported;
  EXPECT_CONTAINS(imported.out, albert_ ? "(albert): 4 layers (2 shared, each applied 2 times)"
                                        : "(xlm-roberta): 2 layers, dim 32");
  EXPECT_CONTAINS(imported.out, "SentencePiece ids, 3 labels");
  const auto from_run = predicted(run);
  expect_near(from_run, reference(), 1e-4, "run vs Python reference");
  ASSERT_EQ(sift("export " + quote(run) + " --out " + quote(dir_ + "/m.pt")).status, 0);
  expect_near(predicted(dir_ + "/m.pt"), from_run, 1e-5, "export vs run");
  expect_near(predicted(dir_ + "/m.pt", true), from_run, 1e-5, "classify.py vs run");
  // Labelled text: eval reads it; two epochs of fine-tuning learn its cue words.
  std::string train;
  const std::vector<std::string> cue{"great fun love", "bad awful hate", "plot story music"};
  for (int i = 0; i < 150; ++i) {
    train += std::string("__label__") +
             (i % 3 == 0   ? "neg"
              : i % 3 == 1 ? "neu"
                           : "pos") +
             " " + cue[i % 3] + (i % 2 ? " the film" : " in 1999, it was") + "\n";
  }
  write_file(dir_ + "/train.txt", train);
  const SiftResult eval = sift("eval --model " + quote(run) + " --data " +
                               quote(dir_ + "/train.txt") + " --format fasttext --json");
  ASSERT_EQ(eval.status, 0) << eval;
  EXPECT_CONTAINS(eval.out, "\"accuracy\"");
  const SiftResult tuned =
      sift("train " + quote(run + "/config.yaml") + " --quiet --set run.dir=" + quote(dir_) +
           " --set run.name=ft --set run.threads=1 --set data.format=fasttext" +
           " --set data.train.path=[" + quote(dir_ + "/train.txt") + "] --set data.valid.path=[" +
           quote(dir_ + "/train.txt") + "] --set data.valid_split=0 --set data.workers=1" +
           " --set train.init_from=" + quote(run) +
           " --set train.epochs=2 --set train.batch_size=10 --set train.optimizer.lr=0.003");
  ASSERT_EQ(tuned.status, 0) << tuned;
  const json report = json::parse(slurp(dir_ + "/ft/report.json"));
  EXPECT_GE(report["splits"]["valid"]["accuracy"].get<double>(), 0.9) << report.dump(1);
}

INSTANTIATE_TEST_SUITE_P(AlbertAndXlmRoberta, ImportPiecesCli,
                         ::testing::Values("albert", "xlm-roberta"), [](const auto& param_info) {
                           return param_info.param == "albert" ? std::string("Albert")
                                                               : std::string("XlmRoberta");
                         });

}  // namespace import_hf_cli_test
}  // namespace sift
