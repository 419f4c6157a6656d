// Issue #40 end to end: a tiny random BERT folder the test writes (2 layers, 32 hidden, a
// vocabulary with "##" pieces, accents, CJK and punctuation), `sift import hf`, fine-tuning
// through train.init_from, exact resume, the TorchScript export with its WordPiece
// vocabulary (fp32, bf16, int8) classified alike by `sift predict` and by
// examples/classify.py in Python, pruning and distillation into a fastText student.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "tests/hf_folder.h"
#include "tests/tools/checkpoint_bytes.h"
#include "tests/tools/run_sift.h"
#include "tests/tools/serve_server.h"

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
  for (const std::string kind : {"fp32", "bf16", "int8"}) {
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

// The fine-tuned encoder teaches a fastText student (Tang et al. 2019): 30 labelled texts
// and 480 unlabelled ones that only the teacher scores, read by each with its own
// tokenizer (WordPiece for the teacher, words for the student).
TEST_F(FinetuneHfCli, TheFineTunedEncoderTeachesAFastTextStudentFromUnlabelledText) {
  const std::string train = labelled("train.txt", 480, "meh", 1);
  const std::string valid = labelled("valid.txt", 60, "meh", 2);
  ASSERT_EQ(fine_tune("teacher", train, valid, "").status, 0);
  std::string unlabelled, few;
  int n = 0;
  for (const auto& line : testing::lines_of(slurp(train))) {
    if (n++ < 30) {
      few += line + "\n";
    } else {
      unlabelled += line.substr(line.find(' ') + 1) + "\n";  // the text without its label
    }
  }
  write_file(dir_ + "/few.txt", few);
  write_file(dir_ + "/unlabelled.txt", unlabelled);
  // The student's config with the teacher's section, and without it (the same student on
  // the 30 labelled texts alone).
  const auto student_yaml = [&](const std::string& name, const std::string& distill) {
    write_file(dir_ + "/" + name + ".yaml",
               "run: {dir: " + dir_ + ", name: " + name +
                   ", threads: 1}\n"
                   "data: {train: {path: few.txt}, valid: {path: valid.txt}, format: fasttext,\n"
                   "       valid_split: 0, workers: 1}\n"
                   "model: {type: fasttext, dim: 16, buckets: 10000}\n"
                   "train:\n"
                   "  epochs: 20\n  batch_size: 8\n  log_every: 5\n"
                   "  optimizer: {type: adam, lr: 0.02}\n" +
                   distill);
  };
  student_yaml("student",
               "  distill: {teacher: " + dir_ + "/teacher, unlabeled: [unlabelled.txt]}\n");
  student_yaml("alone", "");
  const SiftResult r = sift("train student.yaml --quiet --json");
  ASSERT_EQ(r.status, 0) << r;
  json summary = json::parse(r.out);
  EXPECT_GT(summary["train"]["transfer"]["unlabeled"]["rows_per_batch"].get<int64_t>(), 0)
      << summary["train"].dump();
  const double student = summary["splits"]["valid"]["accuracy"].get<double>();
  const SiftResult alone = sift("train alone.yaml --quiet --json");
  ASSERT_EQ(alone.status, 0) << alone;
  const double without = json::parse(alone.out)["splits"]["valid"]["accuracy"].get<double>();
  EXPECT_GE(student, 0.85) << r.out;
  EXPECT_GT(student, without) << alone.out;
  // The student exports as an ordinary fastText file, a fraction of the teacher's.
  ASSERT_EQ(sift("export student --out student.pt").status, 0);
  ASSERT_EQ(sift("export teacher --out teacher.pt").status, 0);
  EXPECT_LT(fs::file_size(dir_ + "/student.pt") * 2, fs::file_size(dir_ + "/teacher.pt"));
  const SiftResult p = sift("predict --model student.pt", "great fun love\nawful boring hate\n");
  ASSERT_EQ(p.status, 0) << p;
  EXPECT_EQ(p.out.rfind("good\t", 0), 0u) << p.out;
  EXPECT_NE(p.out.find("\nbad\t"), std::string::npos) << p.out;
  const double teacher =
      json::parse(slurp(dir_ + "/teacher/report.json"))["splits"]["valid"]["accuracy"];
  std::cout << "valid accuracy: teacher " << teacher << ", student " << student
            << ", student alone " << without << "\n";
}

// Attention heads and feed-forward units of the imported encoder pruned to half while it is
// fine-tuned (the cubic schedule from step 20 to 80 of 120): the task is still learnt, the
// export holds two of each layer's four heads and 32 of its 64 units, and `sift predict`,
// Python and `sift serve` give the masked run's probabilities from it.
TEST_F(FinetuneHfCli, ThePrunedEncoderExportsHalfItsUnitsAndPredictsAsTheRun) {
  const std::string train = labelled("train.txt", 480, "meh", 1);
  const std::string valid = labelled("valid.txt", 60, "meh", 2);
  const SiftResult r = fine_tune("pruned", train, valid,
                                 "--set train.prune.structure=[heads,ffn] "
                                 "--set train.prune.sparsity=0.5 --set train.prune.start_step=20 "
                                 "--set train.prune.end_step=80 --set train.prune.every=10");
  ASSERT_EQ(r.status, 0) << r;
  const json report = json::parse(slurp(dir_ + "/pruned/report.json"));
  const double accuracy = report["splits"]["valid"]["accuracy"].get<double>();
  EXPECT_GE(accuracy, 0.85) << report.dump(1);
  std::cout << "pruned to half: valid accuracy " << accuracy << "\n";
  const std::string file = dir_ + "/pruned.pt";
  ASSERT_EQ(sift("export " + quote(dir_ + "/pruned") + " --out " + quote(file)).status, 0);
  ASSERT_EQ(sift("export " + quote(base()) + " --out " + quote(dir_ + "/base.pt")).status, 0);
  EXPECT_LT(fs::file_size(file), fs::file_size(dir_ + "/base.pt"));
  const SiftResult shapes = run_command(
      "/usr/bin/python3 -c \"import torch,sys; "
      "p=dict(torch.jit.load(sys.argv[1]).named_parameters());"
      " print(*[tuple(p[f'layers_{l}_{n}_weight'].shape) for l in (0, 1)"
      " for n in ('attention_in_proj', 'attention_out_proj', 'ff_in', 'ff_out')])\" " +
          quote(file),
      dir_);
  ASSERT_EQ(shapes.status, 0) << shapes;
  // Two heads of 8 dimensions: q, k and v rows 3 x 16; out_proj's 16 columns; 32 units.
  EXPECT_EQ(shapes.out,
            "(48, 32) (32, 16) (32, 32) (32, 32) (48, 32) (32, 16) (32, 32) (32, 32)\n");
  const auto from_run = predict(dir_ + "/pruned");
  expect_near(predict(file), from_run, 1e-5, "pruned export vs run");
  expect_near(classify_py(file), from_run, 1e-5, "pruned export in Python vs run");
  // Served: every label of each (non-empty) text, as the run folder gives them.
  std::vector<std::string> texts;
  std::vector<size_t> rows;
  for (size_t i = 0; i < kTexts.size(); ++i) {
    if (kTexts[i].empty()) continue;
    texts.push_back(kTexts[i]);
    rows.push_back(i);
  }
  serve_test::Server server(dir_, {"--model", "pruned=" + file});
  ASSERT_GT(server.port(), 0) << server.err();
  const auto [status, body] =
      server.post("/v1/models/pruned/predict", serve_test::texts_body(texts, R"(, "top_k": 3)"));
  ASSERT_EQ(status, 200) << body;
  const auto served = serve_test::rows_of(body);
  ASSERT_EQ(served.size(), texts.size()) << body;
  for (size_t i = 0; i < served.size(); ++i) {
    ASSERT_EQ(served[i].size(), 3u) << body;
    for (const auto& [label, p] : served[i]) {
      EXPECT_NEAR(p, from_run[rows[i]].at(label), 1e-5) << "served: " << texts[i] << " " << label;
    }
  }
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

// A config of data paths and `train.init_from: base` alone is a whole fine-tuning config:
// the imported run's model, WordPiece vocabulary and lengths, then the bert model's own
// defaults (AdamW, warm-up then linear decay); the task is learnt.
TEST_F(FinetuneHfCli, AConfigOfDataPathsAndInitFromFineTunesTheImportedModel) {
  labelled("train.txt", 480, "meh", 1);
  labelled("valid.txt", 60, "meh", 2);
  write_file(dir_ + "/plain.yaml",
             "run: {name: plain, threads: 1}\n"
             "data: {train: {path: train.txt}, valid: {path: valid.txt}, format: fasttext,\n"
             "       valid_split: 0, workers: 1}\n"
             "train: {init_from: base, epochs: 2, batch_size: 8, optimizer: {lr: 0.002}}\n");
  const SiftResult dump = sift("config plain.yaml --dump");
  ASSERT_EQ(dump.status, 0) << dump;
  EXPECT_CONTAINS(dump.out, "dim: 32  # train.init_from (base)");
  EXPECT_CONTAINS(dump.out, "type: wordpiece  # train.init_from (base)");
  EXPECT_CONTAINS(dump.out, "type: warmup_linear  # model default (bert)");
  const SiftResult r = sift("train plain.yaml --quiet --json --set run.dir=.");
  ASSERT_EQ(r.status, 0) << r;
  const json summary = json::parse(r.out);
  EXPECT_GE(summary["splits"]["valid"]["accuracy"].get<double>(), 0.9) << r.out;
  const std::string config = slurp(dir_ + "/plain/config.yaml");
  for (const char* line : {"type: bert", "layers: 2", "heads: 4", "ff_dim: 64", "max_positions: 40",
                           "type: wordpiece", "type: adamw"}) {
    EXPECT_CONTAINS(config, line);
  }
  EXPECT_EQ(slurp(dir_ + "/plain/tokenizer.model"), slurp(base() + "/tokenizer.model"));
  EXPECT_CONTAINS(slurp(dir_ + "/plain/train.log"), "a new classification head");
  // A fine-tuning's own choices may differ from the run's: dropout, frozen embeddings.
  ASSERT_EQ(
      sift("config plain.yaml --set model.dropout=0 --set model.freeze_embeddings=true").status, 0);
}

// `sift tokenizer encode` prints the ids the fine-tuning reads: [CLS] pieces [SEP] in the
// run's vocab.txt ids, "##" pieces and [UNK] as BERT's WordPiece gives them, the long text
// cut to the run's data.max_length (40, the folder's positions), one line per text.
TEST_F(FinetuneHfCli, TokenizerEncodePrintsTheIdsTheFineTuningReads) {
  labelled("train.txt", 30, "meh", 1);
  std::string input;
  for (const auto& t : kTexts) input += t + "\n";
  const SiftResult r = sift("tokenizer encode " + quote(base() + "/config.yaml") +
                                " --set data.format=fasttext --set data.train.path=[train.txt]" +
                                " --set train.init_from=" + quote(base()),
                            input);
  ASSERT_EQ(r.status, 0) << r;
  const auto lines = testing::lines_of(r.out);
  ASSERT_EQ(lines.size(), kTexts.size()) << r.out;
  EXPECT_EQ(lines[0], "2 5 6 7 8 30 3");                         // the film was great !
  EXPECT_EQ(lines[1], "2 20 21 22 26 6 23 29 27 35 33 1 34 3");  // un ##aff ##able ...
  EXPECT_EQ(lines[2], "2 36 37 38 39 15 3");                     // CJK one by one
  EXPECT_EQ(lines[4], "2 3");                                    // the empty text
  std::istringstream last(lines[7]);
  std::vector<int64_t> ids{std::istream_iterator<int64_t>(last), std::istream_iterator<int64_t>()};
  ASSERT_EQ(ids.size(), 40u) << lines[7];
  EXPECT_EQ(ids.front(), 2);
  EXPECT_EQ(ids.back(), 3);
}

// A model key that contradicts the imported run is refused in one line naming the key,
// where it was given and both values, before a run folder is made; a key that agrees is
// accepted.
TEST_F(FinetuneHfCli, AModelKeyThatContradictsTheImportedRunIsRefused) {
  labelled("train.txt", 30, "meh", 1);
  write_file(dir_ + "/plain.yaml",
             "run: {name: wide, threads: 1}\n"
             "data: {train: {path: train.txt}, format: fasttext}\n"
             "model: {heads: 4}\n"
             "train: {init_from: base, epochs: 1}\n");
  const SiftResult wide = sift("train plain.yaml --quiet --set model.dim=64");
  EXPECT_EQ(wide.status, 1) << wide;
  EXPECT_TRUE(testing::CleanSiftError(
      wide, {"model.dim: --set model.dim gives 64, but the bert model in base (train.init_from) "
             "has 32",
             "leave model.dim out"}));
  const SiftResult eps = sift("train plain.yaml --quiet --set model.layer_norm_eps=1e-5");
  EXPECT_TRUE(testing::CleanSiftError(eps, {"model.layer_norm_eps", "1e-05", "1e-12"})) << eps;
  EXPECT_FALSE(fs::exists(dir_ + "/runs/wide"));
  // Another model type: the run plan's refusal, naming both.
  write_file(dir_ + "/typed.yaml",
             "data: {train: {path: train.txt}, format: fasttext}\n"
             "train: {init_from: base, epochs: 1}\n");
  EXPECT_TRUE(testing::CleanSiftError(sift("train typed.yaml --quiet --set model.type=fasttext"),
                                      {"train.init_from: base holds a 'bert' model, and this "
                                       "config trains 'fasttext'"}));
  EXPECT_EQ(sift("train plain.yaml --quiet").status, 0);
}

}  // namespace finetune_hf_cli_test
}  // namespace sift
