// Issue #40 end to end: a tiny random BERT folder the test writes (2 layers, 32 hidden, a
// vocabulary with "##" pieces, accents, CJK and punctuation), `sift import hf`, fine-tuning
// through train.init_from, exact resume, the TorchScript export with its WordPiece
// vocabulary (fp32, bf16, int8) classified alike by `sift predict` and by
// examples/classify.py in Python, pruning and distillation into a fastText student.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/hf_folder.h"
#include "tests/tools/run_sift.h"

namespace sift {
namespace finetune_hf_cli_test {

namespace fs = std::filesystem;
using nlohmann::json;
using sift::testing::quote;
using sift::testing::run_command;
using sift::testing::run_sift;
using sift::testing::SiftResult;
using sift::testing::write_file;

const std::string kSource = SIFT_SOURCE_DIR;

// 50 tokens, as many as the folder's embedding rows: specials, words of the task, pieces
// that make "unaffable" three and "films" two, accented and CJK entries, punctuation.
const std::vector<std::string> kVocab{
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the",  "film",  "was",  "great", "good",
    "fun",   "bad",   "awful", "boring", "dull",  "love", "hate",  "movie", "plot", "story",
    "un",    "##aff", "##able", "##s",  "##ing", "##ly", "cafe",  "naive", ".",    ",",
    "!",     "?",     "'",     "«",     "»",     "…",    "我",    "爱",    "电",   "影",
    "don",   "t",     "stop",  "a",     "and",   "of",   "is",    "it",    "σας",  "x"};

// Texts that reach every part of BERT's basic tokenizer and WordPiece.
const std::vector<std::string> kTexts{
    "The film was GREAT!",
    "unaffable Café films, naïve… «quoted»",
    "我爱电影 love",
    "xyzzy plugh",
    "",
    "great\tfun\u3000bad\u00a0awful\x01 don't stop",
    "ΣΑΣ σας",
    "the plot the story the movie the film the plot the story the movie the film the plot "
    "the story the movie the film the plot the story the movie the film the plot the story "
    "great awful great awful",
};

class FinetuneHfCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::make_temp_dir("sift_finetune_hf");
    folder_ = testing::hf_folder("bert");
    std::string vocab;
    for (const auto& t : kVocab) vocab += t + "\n";
    write_file(folder_ + "/vocab.txt", vocab);
    const SiftResult r = run_sift("import hf " + quote(folder_) + " --out " + quote(base()), dir_);
    ASSERT_EQ(r.status, 0) << r;
  }

  std::string base() const { return dir_ + "/base"; }

  SiftResult sift(const std::string& args, const std::string& input = "") {
    return run_sift(args, dir_, input, dir_);
  }

  // Each text's probability per label, from `sift predict --json` (`model`: run or export).
  std::vector<std::map<std::string, double>> predict(const std::string& model) {
    std::string input;
    for (const auto& t : kTexts) input += t + "\n";
    const SiftResult r = sift("predict --model " + quote(model) + " --json --top-k 9", input);
    EXPECT_EQ(r.status, 0) << r;
    return rows(r.out, "score");
  }

  // The same from examples/classify.py on an export, in Python alone.
  std::vector<std::map<std::string, double>> classify_py(const std::string& model) {
    std::string input;
    for (const auto& t : kTexts) input += t + "\n";
    const SiftResult r = run_command("/usr/bin/python3 " + quote(kSource + "/examples/classify.py") +
                                         " " + quote(model) + " --json --top-k 9",
                                     dir_, input, dir_);
    EXPECT_EQ(r.status, 0) << r;
    return rows(r.out, "score");
  }

  static std::vector<std::map<std::string, double>> rows(const std::string& out,
                                                         const std::string& key) {
    std::vector<std::map<std::string, double>> result;
    for (const auto& line : testing::lines_of(out)) {
      std::map<std::string, double> row;
      const json parsed = json::parse(line);  // kept: the loop reads into it
      for (const auto& p : parsed.at("predictions")) {
        row[p["label"].get<std::string>()] = p[key].get<double>();
      }
      result.push_back(row);
    }
    return result;
  }

  static void expect_near(const std::vector<std::map<std::string, double>>& a,
                          const std::vector<std::map<std::string, double>>& b, double tolerance,
                          const std::string& what) {
    ASSERT_EQ(a.size(), kTexts.size()) << what;
    ASSERT_EQ(b.size(), kTexts.size()) << what;
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i].size(), 3u) << what << ": " << kTexts[i];
      ASSERT_EQ(b[i].size(), 3u) << what << ": " << kTexts[i];
      for (const auto& [label, p] : a[i]) {
        ASSERT_TRUE(b[i].count(label)) << what << ": " << label;
        EXPECT_NEAR(p, b[i].at(label), tolerance) << what << ": '" << kTexts[i] << "' " << label;
      }
    }
  }

  std::string dir_, folder_;
};

// The export carries BERT's vocab.txt and the WordPiece settings: `sift predict` on the
// file gives the run folder's probabilities, and examples/classify.py, tokenizing in
// Python from the file alone, gives the same; bf16 and int8 files too, near fp32's.
TEST_F(FinetuneHfCli, ExportsCarryTheWordPieceVocabularyAndPythonClassifiesAlike) {
  const auto from_run = predict(base());
  for (const std::string& kind : {"fp32", "bf16", "int8"}) {
    const std::string out = dir_ + "/" + kind + ".pt";
    const std::string flags = kind == "bf16"   ? " --dtype bf16"
                              : kind == "int8" ? " --quantize int8"
                                               : "";
    const SiftResult r = sift("export " + quote(base()) + " --out " + quote(out) + flags);
    ASSERT_EQ(r.status, 0) << r;
    const auto from_export = predict(out);
    // fp32: the same arithmetic; bf16 and int8 round the weights (8 bits of mantissa).
    expect_near(from_export, from_run, kind == "fp32" ? 1e-5 : 0.05, kind + " export vs run");
    expect_near(classify_py(out), from_export, kind == "fp32" ? 1e-5 : 1e-3,
                kind + ": classify.py vs sift predict");
  }
  // A reader that tokenized otherwise would differ: the texts do not all score alike.
  ASSERT_EQ(from_run.size(), kTexts.size());
  ASSERT_TRUE(from_run[0].count("pos") && from_run[3].count("pos"));
  EXPECT_GT(std::abs(from_run[0].at("pos") - from_run[3].at("pos")), 1e-4);
}

}  // namespace finetune_hf_cli_test
}  // namespace sift
