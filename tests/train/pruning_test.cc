// train.prune: Zhu & Gupta's schedule at given steps, masks that choose the weakest
// units, and a structurally pruned export (units removed from the matrices) that gives
// the masked model's logits, in C++ and in Python (examples/classify.py).
#include "framework/train/pruning.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "config/loader.h"
#include "framework/runtime/base/task.h"
#include "framework/runtime/collate.h"
#include "framework/runtime/export.h"
#include "tests/test_files.h"

namespace sift {
namespace pruning_test {

const std::string kData = std::string(SIFT_SOURCE_DIR) + "/tests/data";
const std::string kSource = SIFT_SOURCE_DIR;

PruneConfig schedule(double sparsity, int64_t start, int64_t end) {
  PruneConfig c;
  c.sparsity = sparsity;
  c.start_step = start;
  c.end_step = end;
  return c;
}

TEST(PruneSchedule, FollowsTheCubicCurveBetweenStartAndEnd) {
  const PruneConfig c = schedule(0.8, 100, 500);
  EXPECT_DOUBLE_EQ(scheduled_sparsity(c, 0), 0.0);
  EXPECT_DOUBLE_EQ(scheduled_sparsity(c, 100), 0.0);
  // t = 200: (t - t0) / (n dt) = 1/4, so s = 0.8 (1 - 0.75^3) = 0.4625.
  EXPECT_NEAR(scheduled_sparsity(c, 200), 0.4625, 1e-12);
  // t = 300: half way, s = 0.8 (1 - 0.5^3) = 0.7.
  EXPECT_NEAR(scheduled_sparsity(c, 300), 0.7, 1e-12);
  EXPECT_DOUBLE_EQ(scheduled_sparsity(c, 500), 0.8);
  EXPECT_DOUBLE_EQ(scheduled_sparsity(c, 10000), 0.8);
}

TEST(PruneSchedule, RisesFastEarlyAndSlowLate) {
  const PruneConfig c = schedule(0.5, 0, 1000);
  double previous = 0.0, previous_gain = 1.0;
  for (int64_t t = 100; t <= 1000; t += 100) {
    const double s = scheduled_sparsity(c, t);
    EXPECT_GT(s, previous) << "step " << t;
    EXPECT_LT(s - previous, previous_gain) << "step " << t;
    previous_gain = s - previous;
    previous = s;
  }
}

std::vector<std::string> trec_options(std::vector<std::string> extra) {
  std::vector<std::string> o = {"data.train.path=[" + kData + "/trec/TREC.train.sample]",
                                "data.test.path=[" + kData + "/trec/TREC.test.sample]",
                                "data.format=label_first", "data.encoding=latin-1",
                                "run.threads=1"};
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

// A model with TREC's vocabulary, random weights moved off their initial values, and
// its masks at the final sparsity (the schedule's end step).
ModelBundle pruned_bundle(const std::vector<std::string>& overrides, Pruner** out = nullptr) {
  static std::unique_ptr<Pruner> pruner;
  ModelBundle b;
  b.config = load_config("", trec_options(overrides));
  b.task = build_task(resolve_data(b.config));
  torch::manual_seed(7);
  b.model = create_model(b.config.model, b.config.train.optimizer, b.task);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : b.model->parameters()) p.add_(torch::randn_like(p) * 0.1);
  }
  const TrainConfig& t = b.config.train;
  pruner = std::make_unique<Pruner>(t.prune, t.optimizer, b.config.model, *b.model);
  pruner->update(b.config.train.prune.end_step);
  b.model->eval();
  if (out) *out = pruner.get();
  return b;
}

std::vector<std::string> texts_of(const SiftConfig& config) {
  auto split = open_split(resolve_data(config), Split::test, LabelSet());
  std::vector<std::string> texts;
  Example example;
  while (split->next(example) && texts.size() < 60) texts.push_back(example.text);
  texts.push_back("");
  texts.push_back("zzqxj wwvkkq");
  return texts;
}

torch::Tensor logits_of(ModelBundle& b, const std::vector<std::string>& texts) {
  TextEncoder encoder = make_encoder(b.task);
  RawBatch batch;
  std::vector<int64_t> ids;
  for (const auto& text : texts) {
    encoder.encode(text, ids);
    batch.offsets.push_back(static_cast<int64_t>(batch.ids.size()));
    batch.ids.insert(batch.ids.end(), ids.begin(), ids.end());
    batch.labels.push_back(0);
  }
  torch::NoGradGuard no_grad;
  return b.model->forward(to_input(batch, b.task.encoder.kind, torch::kCPU));
}

torch::Tensor python_logits(const std::string& model, const std::vector<std::string>& texts) {
  const std::string input = model + ".texts", output = model + ".logits", err = model + ".err";
  std::string lines;
  for (const auto& t : texts) lines += t + "\n";
  testing::write_file(input, lines);
  const std::string command = "/usr/bin/python3 " + kSource + "/examples/classify.py " + model +
                              " " + input + " --logits >" + output + " 2>" + err;
  EXPECT_EQ(std::system(command.c_str()), 0) << testing::slurp(err);
  std::vector<torch::Tensor> rows;
  std::istringstream in(testing::slurp(output));
  for (std::string line; std::getline(in, line);) {
    rows.push_back(
        torch::tensor(nlohmann::json::parse(line).get<std::vector<double>>(), torch::kFloat64));
  }
  if (rows.size() != texts.size()) return torch::zeros({0});
  return torch::stack(rows).to(torch::kFloat32);
}

std::map<std::string, std::vector<int64_t>> shapes_of(const torch::jit::Module& m) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& p : m.named_parameters(false)) shapes[p.name] = p.value.sizes().vec();
  for (const auto& p : m.named_buffers(false)) shapes[p.name] = p.value.sizes().vec();
  return shapes;
}

struct PruneCase {
  std::string name;
  std::vector<std::string> overrides;
  // An exported tensor and the size its first (or, with `dim`, another) dimension has
  // once the pruned units are gone.
  std::string tensor;
  int64_t dim;
  int64_t size;
};
void PrintTo(const PruneCase& c, std::ostream* os) { *os << c.name; }

class PrunedExport : public ::testing::TestWithParam<PruneCase> {};

TEST_P(PrunedExport, RemovesThePrunedUnitsAndKeepsTheMaskedLogits) {
  const PruneCase& c = GetParam();
  ModelBundle masked = pruned_bundle(c.overrides);
  const auto texts = texts_of(masked.config);
  const torch::Tensor expected = logits_of(masked, texts);
  ASSERT_GT(expected.std().item<double>(), 1e-3);

  const std::string path = testing::temp_root() + "/sift_pruned_" + c.name + ".pt";
  export_run(masked, path);
  ModelBundle loaded = load_export(path);
  auto& script = static_cast<ScriptedClassifierImpl&>(*loaded.model).script();
  const auto shapes = shapes_of(script);
  ASSERT_TRUE(shapes.count(c.tensor)) << c.tensor;
  int64_t size = c.size;
  if (size < 0) {  // fastText rows: the kept rows and one zero row
    const int64_t rows = masked.model->named_parameters()["embedding.weight"].size(0);
    size = rows - static_cast<int64_t>(0.9 * static_cast<double>(rows)) + 1;
    EXPECT_TRUE(shapes.count("embedding_kept_rank"));
  }
  EXPECT_EQ(shapes.at(c.tensor).at(static_cast<size_t>(c.dim)), size);

  const torch::Tensor cpp = logits_of(loaded, texts);
  ASSERT_EQ(cpp.sizes(), expected.sizes());
  EXPECT_LT((cpp - expected).abs().max().item<double>(), 1e-5);
  const torch::Tensor python = python_logits(path, texts);
  ASSERT_EQ(python.sizes(), expected.sizes());
  EXPECT_LT((python - expected).abs().max().item<double>(), 1e-5);
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(
    EveryStructure, PrunedExport,
    ::testing::Values(
        // 10 filters per width, half pruned: conv weights [5, dim, w].
        PruneCase{"textcnn_filters",
                  {"model.type=textcnn", "model.dim=16", "model.filters=10",
                   "train.prune.structure=[filters]", "train.prune.sparsity=0.5"},
                  "convs_1_weight",
                  0,
                  5},
        // 4 heads of 8 dims and 32 feed-forward units, half of each pruned: in_proj has
        // 3 x 2 x 8 rows, ff_in 16.
        PruneCase{"transformer_heads",
                  {"model.type=transformer", "model.dim=32", "model.heads=4", "model.layers=2",
                   "model.ff_dim=32", "model.max_positions=64",
                   "train.prune.structure=[heads, ffn]", "train.prune.sparsity=0.5"},
                  "layers_1_attention_in_proj_weight",
                  0,
                  48},
        PruneCase{"transformer_ffn",
                  {"model.type=transformer", "model.dim=32", "model.heads=4", "model.layers=2",
                   "model.ff_dim=32", "model.max_positions=64",
                   "train.prune.structure=[heads, ffn]", "train.prune.sparsity=0.5"},
                  "layers_0_ff_out_weight",
                  1,
                  16},
        // A 2-layer BiLSTM of 16 units per direction, half pruned: the second layer reads
        // 2 x 8 features, its recurrence 8.
        PruneCase{
            "bilstm_hidden",
            {"model.type=rnn", "model.dim=16", "model.hidden=16", "model.layers=2",
             "model.pooling=max", "train.prune.structure=[hidden]", "train.prune.sparsity=0.5"},
            "rnn_weight_ih_l1_reverse",
            1,
            16},
        // A one-layer BiGRU with attention pooling: 3 gates x 8 units kept per direction.
        PruneCase{"bigru_attention_hidden",
                  {"model.type=rnn", "model.cell=gru", "model.dim=16", "model.hidden=16",
                   "model.layers=1", "model.pooling=attention", "train.prune.structure=[hidden]",
                   "train.prune.sparsity=0.5"},
                  "rnn_weight_hh_l0_reverse",
                  0,
                  24},
        // 90% of the rows (words and 1000 buckets) pruned: the kept ids are the rest.
        PruneCase{"fasttext_rows",
                  {"model.type=fasttext", "model.dim=8", "model.ngrams=2", "model.buckets=1000",
                   "train.prune.structure=[rows]", "train.prune.sparsity=0.9"},
                  "embedding_weight",
                  0,
                  -1}),
    [](const ::testing::TestParamInfo<PruneCase>& p) { return p.param.name; });

TEST(Pruner, MasksTheWeakestUnitsOfEachLayerAndReportsThem) {
  Pruner* pruner = nullptr;
  ModelBundle b = pruned_bundle({"model.type=textcnn", "model.dim=16", "model.filters=10",
                                 "train.prune.structure=[filters]", "train.prune.sparsity=0.3"},
                                &pruner);
  const nlohmann::json report = pruner->report();
  for (const auto& [name, group] : report["groups"].items()) {
    EXPECT_EQ(group["units"], 10) << name;
    EXPECT_EQ(group["pruned"], 3) << name;
  }
  // The mask reached the weights: three filters of width 3 are all zeros.
  auto params = b.model->named_parameters();
  const auto norms = params["convs.0.weight"].reshape({10, -1}).norm(2, 1);
  EXPECT_EQ((norms == 0).sum().item<int64_t>(), 3);
  EXPECT_NEAR(report["parameters"]["convs.0.bias"]["sparsity"].get<double>(), 0.3, 1e-9);
}

TEST(Pruner, UnstructuredMasksTheSmallestWeightsOfEachNamedParameter) {
  Pruner* pruner = nullptr;
  ModelBundle b =
      pruned_bundle({"model.type=textcnn", "model.dim=16", "model.filters=10",
                     "train.prune.structure=[unstructured]", "train.prune.params=[convs.*.weight]",
                     "train.prune.sparsity=0.75"},
                    &pruner);
  auto params = b.model->named_parameters();
  for (const char* name : {"convs.0.weight", "convs.2.weight"}) {
    const auto w = params[name];
    const int64_t zeros = (w == 0).sum().item<int64_t>();
    EXPECT_EQ(zeros, static_cast<int64_t>(0.75 * static_cast<double>(w.numel()))) << name;
    // The kept ones are the others: none of them is zero.
    EXPECT_GT(w.abs().masked_select(w != 0).min().item<double>(), 0.0);
  }
  EXPECT_EQ((params["output.weight"] == 0).sum().item<int64_t>(), 0);
  EXPECT_EQ(pruner->report()["parameters"].size(), 3u);
}

}  // namespace pruning_test
}  // namespace sift
