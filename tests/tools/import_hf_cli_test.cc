// `sift import hf` of a tiny random BERT folder that the test writes, then `sift predict`
// of the run: its probabilities equal the softmax of an independent Python forward
// (tests/models/bert_reference.py) over the WordPiece ids of the same texts.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "datasets/wordpiece.h"
#include "tests/hf_folder.h"
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
  std::vector<std::vector<double>> probs;
  for (const auto& row : json::parse(slurp(out))) {
    std::vector<double> p;
    double sum = 0, top = -1e300;
    for (double v : row) top = std::max(top, v);
    for (double v : row) sum += std::exp(v - top);
    for (double v : row) p.push_back(std::exp(v - top) / sum);
    probs.push_back(p);
  }
  return probs;
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
  config["model_type"] = "xlm-roberta";
  write_file(folder + "/config.json", config.dump());
  const SiftResult type =
      run_sift("import hf " + quote(folder) + " --out " + quote(dir + "/run"), dir);
  EXPECT_EQ(type.status, 1) << type;
  EXPECT_CONTAINS(type.err,
                  "model_type \"xlm-roberta\" is not supported yet: Sift lacks "
                  "RoBERTa's position ids");
  EXPECT_EQ(sift::testing::lines_of(type.err).size(), 1u) << type;
  // ALBERT and RoBERTa: each names what is missing, in one line.
  for (const auto& [model_type, missing] : std::vector<std::pair<std::string, std::string>>{
           {"albert", "ALBERT's layers shared across depth"},
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

}  // namespace import_hf_cli_test
}  // namespace sift
