// `sift pretrain` (issue #43): a tiny BERT-family encoder pretrained by masked-token
// prediction on unlabelled texts that the test writes, whose masked-token accuracy rises far
// above chance and is in metrics.csv and report.html; its run folder fine-tuned by
// `sift train` with train.init_from; a run killed with SIGKILL and resumed ending with the
// uninterrupted run's bytes; and the refusals, each one line naming the key.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint_bytes.h"
#include "process.h"
#include "run_sift.h"

namespace sift {
namespace pretrain_cli_test {

namespace fs = std::filesystem;
using testing::checkpoint_view;
using testing::make_temp_dir;
using testing::run_sift;
using testing::SiftResult;
using testing::slurp;
using testing::write_file;

constexpr int kWords = 24;

std::string word(int i) { return "w" + std::to_string(i % kWords); }

// [PAD] [UNK] [CLS] [SEP] [MASK], then w0 ... w23.
std::string vocabulary() {
  std::string v = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
  for (int i = 0; i < kWords; ++i) v += word(i) + "\n";
  return v;
}

// Texts of 20 to 27 copies of one word: in a packed sequence of 16 tokens the other
// tokens give a masked word away. `labelled`: "lo" or "hi" by the word first (label_first).
std::string texts(int count, int seed, bool labelled) {
  std::string out;
  for (int t = 0; t < count; ++t) {
    const int w = (t * 7 + seed * 13) % kWords, n = 20 + (t * 5 + seed) % 8;
    if (labelled) out += std::string(w < kWords / 2 ? "lo" : "hi") + " ";
    for (int i = 0; i < n; ++i) out += (i ? " " : "") + word(w);
    out += "\n";
  }
  return out;
}

const char* kModel = R"(model:
  type: bert
  dim: 32
  layers: 2
  heads: 4
  ff_dim: 64
  max_positions: 32
  dropout: 0.0
tokenizer:
  type: wordpiece
  model: vocab.txt
)";

// A folder with vocab.txt, unlabelled.txt, held_out.txt, labelled.tsv and pretrain.yaml.
std::string pretraining_folder(const std::string& name) {
  const std::string dir = make_temp_dir(name);
  write_file(dir + "/vocab.txt", vocabulary());
  write_file(dir + "/unlabelled.txt", texts(300, 1, false));
  write_file(dir + "/held_out.txt", texts(30, 2, false));
  write_file(dir + "/labelled.tsv", texts(200, 3, true));
  write_file(dir + "/valid.tsv", texts(60, 4, true));
  write_file(dir + "/pretrain.yaml", std::string(R"(run:
  dir: runs
  name: pre
  seed: 3
  threads: 1
data:
  workers: 1
  shuffle_buffer: 64
pretrain:
  files: [unlabelled.txt]
  valid: [held_out.txt]
  max_tokens: 16
)") + kModel + R"(train:
  epochs: 12
  batch_size: 16
  eval_every: 40
  optimizer:
    type: adamw
    lr: 0.003
  scheduler:
    type: linear
)");
  return dir;
}

TEST(PretrainCli, MaskedTokenAccuracyRisesFarAboveChanceAndFineTuningStartsFromTheEncoder) {
  const std::string dir = pretraining_folder("sift_pretrain");
  const SiftResult pre = run_sift("pretrain pretrain.yaml --quiet --json", dir, "", dir);
  ASSERT_EQ(pre.status, 0) << pre;
  const nlohmann::json summary = nlohmann::json::parse(pre.out);
  // 24 words: chance is 1/24 (measured: 0.81 after 20 epochs, 0.11 after 4).
  EXPECT_GT(summary["splits"]["valid"]["masked_accuracy"].get<double>(), 0.5) << pre.out;
  const std::string csv = slurp(dir + "/runs/pre/metrics.csv");
  EXPECT_NE(csv.find("valid_masked_accuracy"), std::string::npos) << csv;
  EXPECT_NE(slurp(dir + "/runs/pre/report.html").find("masked-token accuracy"), std::string::npos);
  EXPECT_EQ(slurp(dir + "/runs/pre/tokenizer.model"), vocabulary()) << "the run carries its vocabulary";

  write_file(dir + "/finetune.yaml", std::string(R"(run:
  dir: runs
  name: fine
  seed: 3
  threads: 1
data:
  train:
    path: labelled.tsv
  valid:
    path: valid.tsv
  format: label_first
  workers: 1
)") + kModel + R"(train:
  epochs: 2
  batch_size: 16
  init_from: runs/pre
  optimizer:
    type: adamw
    lr: 0.001
)");
  const SiftResult fine = run_sift("train finetune.yaml --json", dir, "", dir);
  ASSERT_EQ(fine.status, 0) << fine;
  EXPECT_NE(fine.err.find("train.init_from: runs/pre/best.ckpt fits but for output.weight, "
                          "output.bias, mlm."),
            std::string::npos)
      << fine.err;
  EXPECT_GT(nlohmann::json::parse(fine.out)["splits"]["valid"]["accuracy"].get<double>(), 0.0);
}

TEST(PretrainCli, ARunKilledWithSigkillAndResumedEndsWithTheUninterruptedRunsBytes) {
  const std::vector<std::string> args{"pretrain", "pretrain.yaml", "--quiet", "--set",
                                      "train.checkpoint_minutes=0", "--set", "train.epochs=2"};
  const std::string reference = pretraining_folder("sift_pretrain_ref");
  ASSERT_EQ(testing::wait_for(testing::start_sift(reference, args)), 0) << slurp(reference + "/err");
  const std::string dir = pretraining_folder("sift_pretrain_kill");
  const pid_t pid = testing::start_sift(dir, args);
  testing::wait_for_file(dir + "/runs/pre/last.ckpt");
  ::kill(pid, SIGKILL);
  ASSERT_EQ(testing::wait_for(pid), 128 + SIGKILL);
  ASSERT_TRUE(fs::exists(dir + "/runs/pre/last.ckpt"));
  const SiftResult resumed = run_sift("pretrain --resume runs/pre --quiet", dir, "", dir);
  ASSERT_EQ(resumed.status, 0) << resumed;
  EXPECT_TRUE(checkpoint_view(dir + "/runs/pre/last.ckpt") ==
              checkpoint_view(reference + "/runs/pre/last.ckpt"))
      << "last.ckpt differs from the uninterrupted run's";
}

TEST(PretrainCli, RefusalsAreOneLineNamingTheKey) {
  const std::string dir = pretraining_folder("sift_pretrain_refuse");
  const SiftResult none = run_sift("pretrain pretrain.yaml --set pretrain.files=[]", dir, "", dir);
  EXPECT_EQ(none.status, 1) << none;
  EXPECT_EQ(none.err.rfind("sift: error: pretrain.files: no unlabelled text files", 0), 0u) << none;
  EXPECT_EQ(testing::lines_of(none.err).size(), 1u) << none;

  const SiftResult missing = run_sift("pretrain pretrain.yaml --set pretrain.files=[gone*.txt]", dir, "", dir);
  EXPECT_EQ(missing.status, 1) << missing;
  EXPECT_NE(missing.err.find("pretrain.files"), std::string::npos) << missing;

  // A fastText run is no encoder to continue.
  write_file(dir + "/ft.yaml", R"(run: {dir: runs, name: ft}
data: {train: {path: labelled.tsv}, format: label_first}
model: {type: fasttext, dim: 4}
train: {epochs: 1}
)");
  ASSERT_EQ(run_sift("train ft.yaml --quiet", dir, "", dir).status, 0);
  write_file(dir + "/continue.yaml", "pretrain: {files: [unlabelled.txt]}\ntrain: {init_from: runs/ft}\n");
  const SiftResult fasttext = run_sift("pretrain continue.yaml", dir, "", dir);
  EXPECT_EQ(fasttext.status, 1) << fasttext;
  EXPECT_EQ(fasttext.err.rfind("sift: error: train.init_from: runs/ft holds a 'fasttext' model, "
                               "not an encoder",
                               0),
            0u)
      << fasttext;

  // Continuing an encoder with another vocabulary.
  ASSERT_EQ(run_sift("pretrain pretrain.yaml --quiet --set train.max_steps=2", dir, "", dir).status, 0);
  write_file(dir + "/other_vocab.txt", vocabulary() + "extra\n");
  write_file(dir + "/continue.yaml",
             "pretrain: {files: [unlabelled.txt]}\ntokenizer: {model: other_vocab.txt}\n"
             "train: {init_from: runs/pre}\n");
  const SiftResult vocab = run_sift("pretrain continue.yaml", dir, "", dir);
  EXPECT_EQ(vocab.status, 1) << vocab;
  EXPECT_EQ(vocab.err.rfind("sift: error: tokenizer.model: other_vocab.txt holds 30 tokens, but "
                            "the encoder in runs/pre (train.init_from) was trained on 29",
                            0),
            0u)
      << vocab;

  // A model that is not an encoder cannot pretrain.
  write_file(dir + "/textcnn.yaml",
             "pretrain: {files: [unlabelled.txt]}\nmodel: {type: textcnn}\n"
             "tokenizer: {type: wordpiece, model: vocab.txt}\n");
  const SiftResult textcnn = run_sift("pretrain textcnn.yaml", dir, "", dir);
  EXPECT_EQ(textcnn.status, 1) << textcnn;
  EXPECT_EQ(textcnn.err.rfind("sift: error: model.type: 'textcnn' is not an encoder", 0), 0u)
      << textcnn;
}

}  // namespace pretrain_cli_test
}  // namespace sift
