// Issue #40 end to end: a tiny random BERT folder the test writes (2 layers, 32 hidden, a
// vocabulary with "##" pieces, accents, CJK and punctuation), `sift import hf`, fine-tuning
// through train.init_from, exact resume, the TorchScript export with its WordPiece
// vocabulary (fp32, bf16, int8) classified alike by `sift predict` and by
// examples/classify.py in Python, pruning and distillation into a fastText student.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "tests/hf_folder.h"
#include "tests/tools/checkpoint_bytes.h"
#include "tests/tools/run_sift.h"

namespace sift {
namespace finetune_hf_cli_test {

namespace fs = std::filesystem;
using nlohmann::json;
using sift::testing::quote;
using sift::testing::run_command;
using sift::testing::run_sift;
using sift::testing::SiftResult;
using sift::testing::slurp;
using sift::testing::write_file;

const std::string kSource = SIFT_SOURCE_DIR;

// 50 tokens, as many as the folder's embedding rows: specials, words of the task, pieces
// that make "unaffable" three and "films" two, accented and CJK entries, punctuation.
const std::vector<std::string> kVocab{
    "[PAD]", "[UNK]", "[CLS]",  "[SEP]",  "[MASK]", "the",  "film", "was",   "great", "good",
    "fun",   "bad",   "awful",  "boring", "dull",   "love", "hate", "movie", "plot",  "story",
    "un",    "##aff", "##able", "##s",    "##ing",  "##ly", "cafe", "naive", ".",     ",",
    "!",     "?",     "'",      "«",      "»",      "…",    "我",   "爱",    "电",    "影",
    "don",   "t",     "stop",   "a",      "and",    "of",   "is",   "it",    "σας",   "x"};

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
    const SiftResult r =
        run_command("/usr/bin/python3 " + quote(kSource + "/examples/classify.py") + " " +
                        quote(model) + " --json --top-k 9",
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

  // Labelled texts in fastText's format: each line's label is told by its words (good:
  // great, good, fun, love; bad: bad, awful, boring, hate; `third`: dull, plot, story),
  // among filler words and pieces.
  std::string labelled(const std::string& name, int lines, const std::string& third,
                       uint32_t seed) {
    const std::vector<std::vector<std::string>> cue{{"great", "good", "fun", "love"},
                                                    {"bad", "awful", "boring", "hate"},
                                                    {"dull", "plot", "story", "naive"}};
    const std::vector<std::string> labels{"good", "bad", third};
    const std::vector<std::string> filler{"the", "film",  "was",       "a",    "and",   "of",
                                          "it",  "movie", "unaffable", "cafe", "films", "!"};
    std::mt19937 rng(seed);
    std::string text;
    for (int i = 0; i < lines; ++i) {
      const size_t k = i % 3;
      text += "__label__" + labels[k];
      const int words = 3 + static_cast<int>(rng() % 10);
      for (int w = 0; w < words; ++w) {
        text += " " + (rng() % 2 == 0 ? cue[k][rng() % 4] : filler[rng() % filler.size()]);
      }
      text += "\n";
    }
    const std::string path = dir_ + "/" + name;
    write_file(path, text);
    return path;
  }

  // `sift train` of the imported run's config.yaml, fine-tuning it (train.init_from) on
  // `train` and `valid` with `sets` on top.
  SiftResult fine_tune(const std::string& name, const std::string& train, const std::string& valid,
                       const std::string& sets) {
    return sift("train " + quote(base() + "/config.yaml") +
                " --quiet --set run.dir=" + quote(dir_) + " --set run.name=" + name +
                " --set run.threads=1" + " --set data.format=fasttext --set data.train.path=[" +
                quote(train) + "] --set data.valid.path=[" + quote(valid) +
                "] --set data.valid_split=0 --set data.workers=1 --set data.bucket_window=4" +
                " --set train.init_from=" + quote(base()) +
                " --set train.epochs=2 --set train.batch_size=8 --set train.log_every=5" +
                " --set train.optimizer.type=adamw --set train.optimizer.lr=0.005" +
                " --set train.optimizer.weight_decay=0.01 --set train.optimizer.layer_decay=0.8" +
                " --set train.freeze=[embedding.weight] " + sets);
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

// Other labels than the imported head's: a new head (said in train.log), AdamW with
// layer-wise decay, warm-up then linear decay, frozen word embeddings and length
// bucketing; the task is learnt, and the run predicts from its folder and its export alike.
TEST_F(FinetuneHfCli, OtherLabelsGetANewHeadAndTheTaskIsLearnt) {
  const std::string train = labelled("train.txt", 480, "meh", 1);
  const std::string valid = labelled("valid.txt", 60, "meh", 2);
  const SiftResult r = fine_tune("ft", train, valid,
                                 "--set train.scheduler.type=warmup_linear "
                                 "--set train.scheduler.warmup_ratio=0.2");
  ASSERT_EQ(r.status, 0) << r;
  const std::string log = slurp(dir_ + "/ft/train.log");
  EXPECT_CONTAINS(log, "train.init_from: the labels (bad, good, meh) are not " + base() +
                           "'s (neg, neu, pos): a new classification head (output.bias, "
                           "output.weight) starts from the model's initialisation");
  const json report = json::parse(slurp(dir_ + "/ft/report.json"));
  EXPECT_GE(report["splits"]["valid"]["accuracy"].get<double>(), 0.9) << report.dump(1);
  // The frozen word embeddings are the imported ones, the layers have moved: the export's
  // tensors against the base run's export, in Python.
  ASSERT_EQ(sift("export " + quote(dir_ + "/ft") + " --out " + quote(dir_ + "/ft.pt")).status, 0);
  ASSERT_EQ(sift("export " + quote(base()) + " --out " + quote(dir_ + "/base.pt")).status, 0);
  const SiftResult moved = run_command(
      "/usr/bin/python3 -c \"import torch,sys; "
      "a=dict(torch.jit.load(sys.argv[1]).named_parameters());"
      " b=dict(torch.jit.load(sys.argv[2]).named_parameters());"
      " print(sorted(k for k in a if k in b and a[k].shape==b[k].shape and not "
      "torch.equal(a[k],b[k])))\" " +
          quote(dir_ + "/ft.pt") + " " + quote(dir_ + "/base.pt"),
      dir_);
  ASSERT_EQ(moved.status, 0) << moved;
  EXPECT_EQ(moved.out.find("'embedding_weight'"), std::string::npos) << moved.out;
  EXPECT_CONTAINS(moved.out, "'layers_0_ff_in_weight'");
  EXPECT_CONTAINS(moved.out, "'head_weight'");
  expect_near(predict(dir_ + "/ft.pt"), predict(dir_ + "/ft"), 1e-5, "fine-tuned export vs run");
  expect_near(classify_py(dir_ + "/ft.pt"), predict(dir_ + "/ft"), 1e-5,
              "fine-tuned export in Python vs run");
}

// Stopped by a step limit inside epoch 1, then resumed: the uninterrupted run's weights,
// byte for byte, with AdamW's two parameter groups and layer-wise rates in last.ckpt.
TEST_F(FinetuneHfCli, AnInterruptedFineTuningResumesToTheUninterruptedWeights) {
  const std::string train = labelled("train.txt", 120, "meh", 1);
  const std::string valid = labelled("valid.txt", 30, "meh", 2);
  const std::string sets = "--set train.scheduler.type=constant";
  ASSERT_EQ(fine_tune("whole", train, valid, sets).status, 0);
  const SiftResult cut = fine_tune("cut", train, valid, sets + " --set train.max_steps=7");
  ASSERT_EQ(cut.status, 0) << cut;
  EXPECT_EQ(json::parse(slurp(dir_ + "/cut/report.json"))["train"]["steps"], 7);
  const SiftResult resumed =
      sift("train --resume " + quote(dir_ + "/cut") + " --quiet --set train.max_steps=0");
  ASSERT_EQ(resumed.status, 0) << resumed;
  EXPECT_EQ(json::parse(slurp(dir_ + "/cut/report.json"))["train"]["steps"], 30);
  const std::string whole = testing::checkpoint_section(dir_ + "/whole/last.ckpt", "model");
  EXPECT_GT(whole.size(), 10000u);
  EXPECT_TRUE(whole == testing::checkpoint_section(dir_ + "/cut/last.ckpt", "model"))
      << "the resumed run's weights differ from the uninterrupted run's";
  expect_near(predict(dir_ + "/cut"), predict(dir_ + "/whole"), 0.0, "resumed vs uninterrupted");
}

// The imported head's own labels: the head is kept (train.log says so), so a step at a
// vanishing rate predicts as the imported run does.
TEST_F(FinetuneHfCli, TheImportedLabelsKeepTheImportedHead) {
  const std::string train = labelled("train.txt", 30, "neu", 1);
  const std::string relabelled = dir_ + "/train_same.txt";
  std::string text = slurp(train);
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"__label__good", "__label__pos"}, {"__label__bad", "__label__neg"}}) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
      text.replace(at, from.size(), to);
    }
  }
  write_file(relabelled, text);
  const SiftResult r = fine_tune("same", relabelled, relabelled,
                                 "--set train.max_steps=1 --set train.optimizer.lr=1e-12");
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_CONTAINS(slurp(dir_ + "/same/train.log"),
                  "train.init_from: " + base() +
                      "'s classification head is kept (the same labels: neg, neu, pos)");
  expect_near(predict(dir_ + "/same"), predict(base()), 1e-5, "kept head vs imported");
}

}  // namespace finetune_hf_cli_test
}  // namespace sift
