// `sift pretrain` (issue #43): a tiny BERT-family encoder pretrained by masked-token
// prediction on unlabelled texts that the test writes, whose masked-token accuracy rises far
// above chance and is in metrics.csv and report.html; its run folder fine-tuned by
// `sift train` with train.init_from; a run killed with SIGKILL and resumed ending with the
// uninterrupted run's bytes; and the refusals, each one line naming the key.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint_bytes.h"
#include "datasets/sentencepiece.h"
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

// Fine-tuning the encoder of runs/pre on labelled.tsv as runs/fine.
std::string finetune_yaml() {
  return std::string(R"(run:
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
)") + kModel +
         R"(train:
  epochs: 2
  batch_size: 16
  init_from: runs/pre
  optimizer:
    type: adamw
    lr: 0.001
)";
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
  EXPECT_EQ(slurp(dir + "/runs/pre/tokenizer.model"), vocabulary())
      << "the run carries its vocabulary";

  write_file(dir + "/finetune.yaml", finetune_yaml());
  const SiftResult fine = run_sift("train finetune.yaml --json", dir, "", dir);
  ASSERT_EQ(fine.status, 0) << fine;
  EXPECT_NE(fine.err.find("train.init_from: runs/pre/best.ckpt fits but for output.weight, "
                          "output.bias, mlm."),
            std::string::npos)
      << fine.err;
  // Two classes (measured: 0.77 after 2 epochs).
  EXPECT_GT(nlohmann::json::parse(fine.out)["splits"]["valid"]["accuracy"].get<double>(), 0.6)
      << fine.out;
}

TEST(PretrainCli, ARunKilledWithSigkillAndResumedEndsWithTheUninterruptedRunsBytes) {
  const std::vector<std::string> args{
      "pretrain", "pretrain.yaml", "--quiet", "--set", "train.checkpoint_minutes=0",
      "--set",    "train.epochs=2"};
  const std::string reference = pretraining_folder("sift_pretrain_ref");
  ASSERT_EQ(testing::wait_for(testing::start_sift(reference, args)), 0)
      << slurp(reference + "/err");
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

// The processes of `sift launch` `pid`: its ranks.
std::vector<pid_t> children_of(pid_t pid) {
  const std::string p = std::to_string(pid);
  std::vector<pid_t> pids;
  for (int attempt = 0; attempt < 500 && pids.size() < 2; ++attempt) {
    pids.clear();
    std::istringstream children(slurp("/proc/" + p + "/task/" + p + "/children"));
    for (pid_t c; children >> c;) pids.push_back(c);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pids;
}

// Two ranks under `sift launch`, both killed with SIGKILL (and the launcher) once rank 0 has
// saved inside the first epoch, then resumed by `sift launch --nproc 2 -- pretrain --resume`:
// the uninterrupted two-rank run's last.ckpt bytes (weights, optimizer, both ranks' places in
// the stream).
TEST(PretrainCli, TwoRanksKilledWithSigkillAndResumedEndWithTheUninterruptedRunsBytes) {
  const std::vector<std::string> args{"launch",  "--nproc",       "2",
                                      "--",      "pretrain",      "pretrain.yaml",
                                      "--quiet", "--set",         "train.checkpoint_minutes=0",
                                      "--set",   "train.epochs=3"};
  const std::string reference = pretraining_folder("sift_pretrain_ddp_ref");
  ASSERT_EQ(testing::wait_for(testing::start_sift(reference, args)), 0)
      << slurp(reference + "/err");
  const std::string dir = pretraining_folder("sift_pretrain_ddp_kill");
  const pid_t launcher = testing::start_sift(dir, args);
  const std::vector<pid_t> ranks = children_of(launcher);
  ASSERT_EQ(ranks.size(), 2u);
  testing::wait_for_file(dir + "/runs/pre/last.ckpt");
  for (const pid_t rank : ranks) ::kill(rank, SIGKILL);
  ::kill(launcher, SIGKILL);
  ASSERT_EQ(testing::wait_for(launcher), 128 + SIGKILL);
  const auto killed = checkpoint_view(dir + "/runs/pre/last.ckpt");
  EXPECT_FALSE(killed == checkpoint_view(reference + "/runs/pre/last.ckpt"))
      << "killed after the run's end, not inside it";
  const SiftResult resumed =
      run_sift("launch --nproc 2 -- pretrain --resume runs/pre --quiet", dir, "", dir);
  ASSERT_EQ(resumed.status, 0) << resumed;
  EXPECT_TRUE(checkpoint_view(dir + "/runs/pre/last.ckpt") ==
              checkpoint_view(reference + "/runs/pre/last.ckpt"))
      << "last.ckpt differs from the uninterrupted two-rank run's";
}

// `sift pretrain` of config `yaml` in `dir` ends in one line, `sift: error: ` and `message`.
::testing::AssertionResult refused(const std::string& dir, const std::string& yaml,
                                   const std::string& message) {
  write_file(dir + "/refused.yaml", yaml);
  const SiftResult r = run_sift("pretrain refused.yaml", dir, "", dir);
  if (r.status == 1 && r.err.rfind("sift: error: " + message, 0) == 0 &&
      testing::lines_of(r.err).size() == 1) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << r;
}

TEST(PretrainCli, RefusalsAreOneLineNamingTheKey) {
  const std::string dir = pretraining_folder("sift_pretrain_refuse");
  const SiftResult none = run_sift("pretrain pretrain.yaml --set pretrain.files=[]", dir, "", dir);
  EXPECT_EQ(none.status, 1) << none;
  EXPECT_EQ(none.err.rfind("sift: error: pretrain.files: no unlabelled text files", 0), 0u) << none;
  EXPECT_EQ(testing::lines_of(none.err).size(), 1u) << none;

  const SiftResult missing =
      run_sift("pretrain pretrain.yaml --set pretrain.files=[gone*.txt]", dir, "", dir);
  EXPECT_EQ(missing.status, 1) << missing;
  EXPECT_NE(missing.err.find("pretrain.files"), std::string::npos) << missing;

  // A fastText run is no encoder to continue.
  write_file(dir + "/ft.yaml", R"(run: {dir: runs, name: ft}
data: {train: {path: labelled.tsv}, format: label_first}
model: {type: fasttext, dim: 4}
train: {epochs: 1}
)");
  ASSERT_EQ(run_sift("train ft.yaml --quiet", dir, "", dir).status, 0);
  EXPECT_TRUE(refused(dir, "pretrain: {files: [unlabelled.txt]}\ntrain: {init_from: runs/ft}\n",
                      "train.init_from: runs/ft holds a 'fasttext' model, not an encoder"));
  // Nor does fine-tuning an encoder start from it.
  write_file(dir + "/finetune.yaml", finetune_yaml());
  const SiftResult fine =
      run_sift("train finetune.yaml --set train.init_from=runs/ft", dir, "", dir);
  EXPECT_EQ(fine.status, 1) << fine;
  EXPECT_EQ(fine.err.rfind("sift: error: train.init_from: runs/ft holds a 'fasttext' model, and "
                           "this config trains 'bert'",
                           0),
            0u)
      << fine;
  EXPECT_FALSE(fs::exists(dir + "/runs/fine")) << "refused before the run folder";

  // Continuing an encoder with another vocabulary.
  ASSERT_EQ(run_sift("pretrain pretrain.yaml --quiet --set train.max_steps=2", dir, "", dir).status,
            0);
  // The encoder has no classes to predict or evaluate.
  write_file(dir + "/texts.txt", texts(3, 5, false));
  for (const std::string command :
       {"predict --model runs/pre --input texts.txt", "eval --model runs/pre --data valid.tsv"}) {
    const SiftResult r = run_sift(command, dir, "", dir);
    EXPECT_TRUE(
        testing::CleanSiftError(r, {"runs/pre is a `sift pretrain` run", "train.init_from"}))
        << command;
  }
  write_file(dir + "/other_vocab.txt", vocabulary() + "extra\n");
  const std::string continued =
      "pretrain: {files: [unlabelled.txt]}\ntrain: {init_from: runs/pre}\n";
  EXPECT_TRUE(refused(dir, continued + "tokenizer: {model: other_vocab.txt}\n",
                      "tokenizer.model: other_vocab.txt holds 30 tokens, but the encoder in "
                      "runs/pre (train.init_from) was trained on 29"));
  // As many tokens, one of them another: the embedding rows would be read as other words.
  std::string swapped = vocabulary();
  swapped.replace(swapped.find("w1\n"), 3, "xx\n");
  write_file(dir + "/swapped_vocab.txt", swapped);
  EXPECT_TRUE(refused(dir, continued + "tokenizer: {model: swapped_vocab.txt}\n",
                      "tokenizer.model: swapped_vocab.txt:7 is 'xx', but the encoder in runs/pre "
                      "(train.init_from) has 'w1' at that id"));

  // A model that is not an encoder cannot pretrain.
  EXPECT_TRUE(refused(dir,
                      "pretrain: {files: [unlabelled.txt]}\nmodel: {type: textcnn}\n"
                      "tokenizer: {type: wordpiece, model: vocab.txt}\n",
                      "model.type: 'textcnn' is not an encoder"));
}

// `sift export` of a pretraining run writes its encoder: PyTorch loads the file alone and
// maps token ids and an attention mask to each token's state and a pooled vector, padding
// changing no real token's state, and to masked-token scores (fp32, bf16 and int8 exports
// alike); the file carries the vocabulary, tokenizer and config.
// Predicting or serving from it is refused as from the run.
TEST(PretrainCli, AnExportedEncoderGivesTokenStatesAndAPooledVectorInPyTorch) {
  const std::string dir = pretraining_folder("sift_pretrain_export");
  ASSERT_EQ(run_sift("pretrain pretrain.yaml --quiet --set train.max_steps=5", dir, "", dir).status,
            0);
  EXPECT_TRUE(fs::exists(dir + "/runs/pre/config.yaml"));
  EXPECT_EQ(slurp(dir + "/runs/pre/tokenizer.model"), vocabulary());
  const SiftResult exported = run_sift("export runs/pre --out enc.pt", dir, "", dir);
  ASSERT_EQ(exported.status, 0) << exported;
  EXPECT_NE(exported.out.find("(bert encoder, fp32"), std::string::npos) << exported;
  write_file(dir + "/load.py", R"(import json, sys, torch
extra = {n: "" for n in ("vocab.txt", "config.yaml", "tokenizer.json", "sift_format.json")}
m = torch.jit.load(sys.argv[1], _extra_files=extra)
vocab = extra["vocab.txt"].decode().split()
t = vocab.index
ids = torch.tensor([[t("[CLS]"), t("w3"), t("w7"), t("w3"), t("[SEP]")],
                    [t("[CLS]"), t("w5"), t("[SEP]"), t("[PAD]"), t("[PAD]")]])
mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
states, pooled = m(ids, mask), m.pooled(ids, mask)
alone = m(ids[1:, :3], mask[1:, :3])
print(json.dumps({"states": list(states.shape), "pooled": list(pooled.shape),
                  "padding": float((alone[0] - states[1, :3]).abs().max()),
                  "rows_differ": float((states[0, 1] - states[0, 2]).abs().max()),
                  "encoder": json.loads(extra["sift_format.json"])["encoder"],
                  "config": "unlabelled.txt" in extra["config.yaml"].decode(),
                  "tokenizer": json.loads(extra["tokenizer.json"])["type"], "vocab": len(vocab)}))
)");
  const SiftResult py = testing::run_command("/usr/bin/python3 load.py enc.pt", dir, "", dir);
  ASSERT_EQ(py.status, 0) << py;
  auto got = nlohmann::json::parse(py.out);  // non-const: a missing key fails, not aborts
  EXPECT_EQ(got["states"], (std::vector<int64_t>{2, 5, 32})) << py.out;
  EXPECT_EQ(got["pooled"], (std::vector<int64_t>{2, 32})) << py.out;
  EXPECT_LT(got["padding"].get<double>(), 1e-5) << py.out;
  EXPECT_GT(got["rows_differ"].get<double>(), 1e-3) << py.out;
  EXPECT_EQ(got["encoder"], true) << py.out;
  EXPECT_EQ(got["config"], true) << py.out;
  EXPECT_EQ(got["tokenizer"], "wordpiece") << py.out;
  EXPECT_EQ(got["vocab"], kWords + 5) << py.out;
  // The masked-token head: a score for every id at every position, in each export format.
  ASSERT_EQ(run_sift("export runs/pre --out enc16.pt --dtype bf16", dir, "", dir).status, 0);
  ASSERT_EQ(run_sift("export runs/pre --out enc8.pt --quantize int8", dir, "", dir).status, 0);
  write_file(dir + "/scores.py", R"(import json, torch
ids = torch.tensor([[2, 8, 4, 8, 3], [2, 9, 3, 0, 0]])
mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
scores = {f: torch.jit.load(f).masked_token_scores(ids, mask) for f in ("enc.pt", "enc16.pt", "enc8.pt")}
fp32 = scores["enc.pt"]
print(json.dumps({"shape": list(fp32.shape), "spread": float(fp32.std()),
                  "bf16": float((scores["enc16.pt"] - fp32).abs().max()),
                  "int8": float((scores["enc8.pt"] - fp32).abs().max())}))
)");
  const SiftResult scores = testing::run_command("/usr/bin/python3 scores.py", dir, "", dir);
  ASSERT_EQ(scores.status, 0) << scores;
  auto head = nlohmann::json::parse(scores.out);  // non-const: a missing key fails, not aborts
  EXPECT_EQ(head["shape"], (std::vector<int64_t>{2, 5, kWords + 5})) << scores.out;
  EXPECT_GT(head["spread"].get<double>(), 0.01) << scores.out;
  // bf16 keeps 8 bits of mantissa, int8 rows 7: both within a tenth of the spread here.
  EXPECT_LT(head["bf16"].get<double>(), 0.1) << scores.out;
  EXPECT_LT(head["int8"].get<double>(), 0.1) << scores.out;
  write_file(dir + "/texts.txt", texts(3, 5, false));
  EXPECT_TRUE(
      testing::CleanSiftError(run_sift("predict --model enc.pt --input texts.txt", dir, "", dir),
                              {"enc.pt is a `sift pretrain` run's encoder export", "fine-tune"}));
}

// The fine-tuning run computes the pretraining run's encoder: with its encoder frozen
// (train.freeze), its exported classifier's logits are its own head over the pretraining
// export's pooled vectors on the same ids, to float rounding, and both files carry the
// same vocabulary. The same classifier trained without train.init_from does not (the check
// can fail: its encoder is BERT's initialisation).
TEST(PretrainCli, TheFineTuningRunsEncoderIsThePretrainedEncoderOnTheSameIds) {
  const std::string dir = pretraining_folder("sift_pretrain_init_from");
  ASSERT_EQ(
      run_sift("pretrain pretrain.yaml --quiet --set train.max_steps=30", dir, "", dir).status, 0);
  ASSERT_EQ(run_sift("export runs/pre --out enc.pt", dir, "", dir).status, 0);
  write_file(dir + "/finetune.yaml", finetune_yaml());
  const std::string frozen =
      " --quiet --set train.epochs=1 --set "
      "'train.freeze=[embedding.*, embedding_norm.*, positions.*, token_types.*, layers.*]'";
  const SiftResult fine = run_sift("train finetune.yaml" + frozen, dir, "", dir);
  ASSERT_EQ(fine.status, 0) << fine;
  std::string fresh_yaml = finetune_yaml();
  fresh_yaml.erase(fresh_yaml.find("  init_from: runs/pre\n"), 22);
  write_file(dir + "/fresh.yaml", fresh_yaml);
  const SiftResult fresh = run_sift("train fresh.yaml --set run.name=fresh" + frozen, dir, "", dir);
  ASSERT_EQ(fresh.status, 0) << fresh;
  for (const std::string run : {"fine", "fresh"}) {
    ASSERT_EQ(run_sift("export runs/" + run + " --out " + run + ".pt", dir, "", dir).status, 0);
  }
  write_file(dir + "/compare.py", R"(import json, sys, torch
def load(path):
    extra = {"vocab.txt": ""}
    return torch.jit.load(path, _extra_files=extra), extra["vocab.txt"]
encoder, vocab = load("enc.pt")
t = vocab.decode().split().index
ids = torch.tensor([[t("[CLS]"), t("w3"), t("w7"), t("w3"), t("w9"), t("[SEP]")],
                    [t("[CLS]"), t("w5"), t("w11"), t("[SEP]"), t("[PAD]"), t("[PAD]")]])
lengths = torch.tensor([6, 4])
mask = (torch.arange(6).unsqueeze(0) < lengths.unsqueeze(1)).long()
out = {}
with torch.no_grad():
    pooled = encoder.pooled(ids, mask)
    for name in ("fine", "fresh"):
        classifier, theirs = load(name + ".pt")
        p = dict(classifier.named_parameters())
        head = torch.tanh(torch.nn.functional.linear(pooled, p["head_weight"], p["head_bias"]))
        expected = torch.nn.functional.linear(head, p["output_weight"], p["output_bias"])
        out[name] = float((classifier(ids, lengths) - expected).abs().max())
        out[name + "_vocab"] = theirs == vocab
print(json.dumps(out))
)");
  const SiftResult py = testing::run_command("/usr/bin/python3 compare.py", dir, "", dir);
  ASSERT_EQ(py.status, 0) << py;
  auto got = nlohmann::json::parse(py.out);  // non-const: a missing key fails, not aborts
  EXPECT_LT(got["fine"].get<double>(), 1e-5) << py.out;
  EXPECT_EQ(got["fine_vocab"], true) << py.out;
  EXPECT_GT(got["fresh"].get<double>(), 1e-3) << py.out;
}

// The masked-token accuracy on held_out.txt of a `sift pretrain` summary.
double masked_accuracy(const SiftResult& r) {
  auto summary = nlohmann::json::parse(r.out);  // non-const: a missing key fails, not aborts
  return summary["splits"]["valid"]["masked_accuracy"].get<double>();
}

// Texts that walk a fixed cycle of 40 words from a random start (10 to 30 words each): a
// word is the one after its left neighbour and before its right one, so context alone
// tells a masked word. Chance and the unigram rate are 1/40.
std::string cycle_texts(int count, uint64_t seed) {
  constexpr int kCycle = 40;
  std::vector<int> order(kCycle);
  for (int i = 0; i < kCycle; ++i) order[i] = (i * 17 + 5) % kCycle;  // 17 is prime to 40
  uint64_t state = seed;
  auto draw = [&state](int n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % static_cast<uint64_t>(n));
  };
  std::string out;
  for (int t = 0; t < count; ++t) {
    int at = draw(kCycle);
    const int n = 10 + draw(21);
    for (int i = 0; i < n; ++i, at = (at + 1) % kCycle) {
      out += (i ? " c" : "c") + std::to_string(order[at]);
    }
    out += "\n";
  }
  return out;
}

// Whether masked-token pretraining learns at all: on texts where the neighbours give a
// masked word away, a tiny encoder predicts nearly every [MASK] position. Measured at [MASK]
// (seeds 1-3): 0.967 / 0.967 / 0.977 with these settings; 0.834 on average over seeds 1-16
// at 1,000 steps of 16 texts, as a PyTorch reference loop of the same model and schedule
// (0.850; bench/mlm_reference.py); one seed of 16 can stay far below (0.409, seed 2). The accuracy
// at [MASK] alone is reported beside the one over every chosen position (which counts the 10% left
// unchanged, whose answer the input gives away).
TEST(PretrainCli, AMaskedWordThatItsNeighboursGiveAwayIsPredictedAtNearlyEveryMaskPosition) {
  const std::string dir = make_temp_dir("sift_pretrain_cycle");
  std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
  for (int i = 0; i < 40; ++i) vocab += "c" + std::to_string(i) + "\n";
  write_file(dir + "/vocab.txt", vocab);
  write_file(dir + "/unlabelled.txt", cycle_texts(2000, 1));
  write_file(dir + "/held_out.txt", cycle_texts(300, 2));
  write_file(dir + "/pretrain.yaml", R"(run: {dir: runs, name: pre, seed: 1, threads: 1}
data: {workers: 1, shuffle_buffer: 64}
pretrain: {files: [unlabelled.txt], valid: [held_out.txt], max_tokens: 32}
model: {type: bert, dim: 32, layers: 2, heads: 4, ff_dim: 64, max_positions: 32, dropout: 0.0,
        pre_norm: true}
tokenizer: {type: wordpiece, model: vocab.txt}
train:
  epochs: 1000
  max_steps: 1500
  batch_size: 32
  eval_every: 100000
  optimizer: {type: adamw, lr: 0.01}
  scheduler: {type: warmup_linear, warmup_ratio: 0.06}
)");
  const SiftResult r = run_sift("pretrain pretrain.yaml --quiet --json", dir, "", dir);
  ASSERT_EQ(r.status, 0) << r;
  auto valid = nlohmann::json::parse(r.out)["splits"]["valid"];  // non-const: see above
  EXPECT_GT(valid["mask_accuracy"].get<double>(), 0.9) << r.out;
  EXPECT_GT(valid["masked_accuracy"].get<double>(), 0.8) << r.out;
  const std::string csv = slurp(dir + "/runs/pre/metrics.csv");
  EXPECT_NE(csv.find("valid_mask_accuracy"), std::string::npos) << csv;
  EXPECT_NE(slurp(dir + "/runs/pre/report.html").find("accuracy at [MASK]"), std::string::npos);
}

// A new encoder's masked-token head starts at the texts' unigram distribution
// (pretrain.unigram_lines): before it has learned anything (one step at a rate of 1e-9) it
// guesses the most frequent id at every [MASK], where a zero bias (pretrain.unigram_lines:
// 0, BERT's) guesses at random among 29 ids. The texts are skewed: w0 is 3 of every 4
// tokens. Zero bias made AG News pretraining learn the unigram distribution through the
// tied embedding rows, which at a learning rate of 0.005 kept it there (#43,
// docs/pretraining.md).
TEST(PretrainCli, ANewEncodersHeadStartsAtTheTextsUnigramDistribution) {
  const std::string dir = make_temp_dir("sift_pretrain_unigram");
  write_file(dir + "/vocab.txt", vocabulary());
  std::string texts;
  for (int t = 0; t < 400; ++t) {
    for (int i = 0; i < 16; ++i) {
      texts += (i ? " " : "") + word(i % 4 == 3 ? 1 + (t * 5 + i) % (kWords - 1) : 0);
    }
    texts += "\n";
  }
  write_file(dir + "/unlabelled.txt", texts);
  write_file(dir + "/held_out.txt", texts);
  write_file(
      dir + "/pretrain.yaml",
      std::string(R"(run: {dir: runs, name: pre, seed: 1, threads: 1}
data: {workers: 1}
pretrain: {files: [unlabelled.txt], valid: [held_out.txt], max_tokens: 32}
)") + kModel +
          R"(train: {epochs: 1, max_steps: 1, batch_size: 4, optimizer: {type: adamw, lr: 1e-9}}
)");
  const auto accuracy_at_mask = [&](const std::string& extra) {
    const SiftResult r = run_sift("pretrain pretrain.yaml --quiet --json" + extra, dir, "", dir);
    EXPECT_EQ(r.status, 0) << r;
    auto summary = nlohmann::json::parse(r.out);  // non-const: a missing key fails, not aborts
    return summary["splits"]["valid"]["mask_accuracy"].get<double>();
  };
  EXPECT_GT(accuracy_at_mask(""), 0.7);  // w0's share, 0.75, up to the draw of the masks
  EXPECT_LT(accuracy_at_mask(" --set pretrain.unigram_lines=0 --set run.name=zero"), 0.3);
}

TEST(PretrainCli, TwoRanksUnderSiftLaunchPretrainOneEncoderEachOnItsPartOfTheTexts) {
  const std::string dir = pretraining_folder("sift_pretrain_ddp");
  const SiftResult r =
      run_sift("launch --nproc 2 -- pretrain pretrain.yaml --quiet --json", dir, "", dir);
  ASSERT_EQ(r.status, 0) << r;
  auto summary = nlohmann::json::parse(r.out);  // non-const: a missing key fails, not aborts
  EXPECT_EQ(summary["train"]["world_size"], 2) << r.out;
  // Each rank reads half of the 300 texts: 12 epochs of about 150 texts at 16 a step.
  EXPECT_LE(summary["train"]["steps"].get<int64_t>(), 12 * 10 + 12) << r.out;
  EXPECT_GT(masked_accuracy(r), 0.5) << r.out;
  EXPECT_NE(slurp(dir + "/runs/pre/metrics.csv").find("valid_masked_accuracy"), std::string::npos);
  // The encoder the two ranks trained fine-tunes as one process's does.
  write_file(dir + "/finetune.yaml", finetune_yaml());
  const SiftResult fine = run_sift("train finetune.yaml --quiet --json", dir, "", dir);
  ASSERT_EQ(fine.status, 0) << fine;
}

// run.shard: parameters (ZeRO stage 3) pretrains at 2 ranks as data parallelism does: the
// layers kept in slices, the token table whole (the masked-token head scores every id
// against all of it); the same steps and validation accuracies. Adam: stage
// 3 shards one group, and adamw's weight decay makes two.
TEST(PretrainCli, ParameterShardsPretrainAtTwoRanksAsDataParallelismDoes) {
  const std::string dir = pretraining_folder("sift_pretrain_stage3");
  const std::string args =
      "launch --nproc 2 -- pretrain pretrain.yaml --quiet --json --set train.epochs=3 "
      "--set train.optimizer.type=adam --set run.name=";
  const SiftResult ddp = run_sift(args + "ddp", dir, "", dir);
  ASSERT_EQ(ddp.status, 0) << ddp;
  const SiftResult sharded = run_sift(args + "sharded --set run.shard=parameters", dir, "", dir);
  ASSERT_EQ(sharded.status, 0) << sharded;
  auto a = nlohmann::json::parse(ddp.out), b = nlohmann::json::parse(sharded.out);
  EXPECT_EQ(b["train"]["shard"], "parameters") << sharded.out;
  EXPECT_EQ(b["train"]["steps"], a["train"]["steps"]);
  EXPECT_EQ(b["splits"]["valid"], a["splits"]["valid"]);  // accuracies at masked and [MASK]
  const auto whole = a["train"]["ranks"][0]["weights_bytes"].get<int64_t>();
  EXPECT_LT(b["train"]["ranks"][0]["weights_bytes"].get<int64_t>(), whole) << sharded.out;
}

TEST(PretrainCli, Bf16WithGradientCheckpointingPretrainsAsFp32Does) {
  const std::string dir = pretraining_folder("sift_pretrain_bf16");
  const SiftResult fp32 = run_sift("pretrain pretrain.yaml --quiet --json", dir, "", dir);
  ASSERT_EQ(fp32.status, 0) << fp32;
  const SiftResult bf16 = run_sift(
      "pretrain pretrain.yaml --quiet --json --set run.name=bf16 --set train.precision=bf16 "
      "--set train.gradient_checkpointing=all",
      dir, "", dir);
  ASSERT_EQ(bf16.status, 0) << bf16;
  auto summary = nlohmann::json::parse(bf16.out);  // non-const: a missing key fails, not aborts
  EXPECT_EQ(summary["train"]["precision"], "bf16") << bf16.out;
  EXPECT_EQ(summary["train"]["gradient_checkpointing"], "all") << bf16.out;
  EXPECT_GT(masked_accuracy(bf16), 0.5) << bf16.out;
  EXPECT_NEAR(masked_accuracy(bf16), masked_accuracy(fp32), 0.15) << fp32.out << bf16.out;
}

// A new encoder on a SentencePiece vocabulary trained from the same stream: `sift tokenizer
// train` with pretrain.files samples the unlabelled texts and adds a [MASK] piece; the
// encoder pretrains on those pieces and fine-tunes through train.init_from with the run's own
// model. A SentencePiece model without [MASK] is refused naming tokenizer.model.
TEST(PretrainCli, ANewEncoderPretrainsOnASentencePieceModelTrainedFromTheSameStream) {
  if (!sentencepiece_supported()) GTEST_SKIP() << "SentencePiece cannot load in this build";
  const std::string dir = pretraining_folder("sift_pretrain_spm");
  write_file(dir + "/spm.yaml",
             "pretrain: {files: [unlabelled.txt]}\n"
             "tokenizer: {type: sentencepiece, model: spm.model, vocab_size: 30}\n");
  const SiftResult trained = run_sift("tokenizer train spm.yaml", dir, "", dir);
  ASSERT_EQ(trained.status, 0) << trained;
  const std::string spm = " --set tokenizer.type=sentencepiece --set tokenizer.model=spm.model";
  const SiftResult pre =
      run_sift("pretrain pretrain.yaml --quiet --json --set run.name=spm" + spm, dir, "", dir);
  ASSERT_EQ(pre.status, 0) << pre;
  EXPECT_GT(masked_accuracy(pre), 0.5) << pre.out;  // chance: 1/30
  EXPECT_EQ(slurp(dir + "/runs/spm/tokenizer.model"), slurp(dir + "/spm.model"))
      << "the run carries its SentencePiece model";

  std::string fine_yaml = finetune_yaml();
  const std::string wordpiece = "tokenizer:\n  type: wordpiece\n  model: vocab.txt\n";
  fine_yaml.erase(fine_yaml.find(wordpiece), wordpiece.size());  // the run's own tokenizer
  write_file(dir + "/finetune.yaml", fine_yaml);
  const SiftResult fine =
      run_sift("train finetune.yaml --json --set train.init_from=runs/spm --set model.pooling=mean",
               dir, "", dir);
  ASSERT_EQ(fine.status, 0) << fine;
  EXPECT_NE(fine.err.find("train.init_from: runs/spm/best.ckpt fits but for output.weight"),
            std::string::npos)
      << fine.err;
  EXPECT_GT(nlohmann::json::parse(fine.out)["splits"]["valid"]["accuracy"].get<double>(), 0.6)
      << fine.out;

  // A model trained for a classifier (no pretrain.files) has no [MASK] piece.
  write_file(dir + "/plain.yaml",
             "data: {train: {path: labelled.tsv}, format: label_first}\n"
             "tokenizer: {type: sentencepiece, model: plain.model, vocab_size: 20}\n");
  ASSERT_EQ(run_sift("tokenizer train plain.yaml", dir, "", dir).status, 0);
  EXPECT_TRUE(
      testing::CleanSiftError(run_sift("pretrain pretrain.yaml --set tokenizer.type=sentencepiece "
                                       "--set tokenizer.model=plain.model --set run.name=plain",
                                       dir, "", dir),
                              {"tokenizer.model", "plain.model has no [MASK] piece"}));
}

}  // namespace pretrain_cli_test
}  // namespace sift
