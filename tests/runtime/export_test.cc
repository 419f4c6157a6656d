// TorchScript export: for every model type, the logits of the training module, of the
// export loaded in C++ and of the export loaded in Python (examples/classify.py under
// /usr/bin/python3, with its own tokenizer) agree on real TREC questions; and each kind
// of bad file gets one clear error.
#include "framework/runtime/export.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "config/loader.h"
#include "core/error.h"
#include "datasets/sentencepiece.h"
#include "framework/runtime/base/export_format.h"
#include "framework/runtime/base/task.h"
#include "framework/runtime/collate.h"
#include "framework/runtime/export_pq.h"
#include "tests/test_files.h"

namespace sift {
namespace export_test {

using sift::testing::error_of;

namespace fs = std::filesystem;

// Cuts of TREC committed under tests/data (600 training, 100 test questions).
const std::string kData = std::string(SIFT_SOURCE_DIR) + "/tests/data";
const std::string kSource = SIFT_SOURCE_DIR;
constexpr double kTolerance = 1e-5;

const std::string& temp_dir() {
  static const std::string dir = testing::make_temp_dir("sift_export");
  return dir;
}

std::vector<std::string> trec_options() {
  return {"data.train.path=[" + kData + "/trec/TREC.train.sample]",
          "data.test.path=[" + kData + "/trec/TREC.test.sample]", "data.format=label_first",
          "data.encoding=latin-1", "run.threads=1"};
}

// A SentencePiece model of TREC's training questions, trained once per process.
const std::string& piece_model() {
  static const std::string path = [] {
    const SiftConfig config = load_config("", trec_options());
    const std::string text = temp_dir() + "/trec.txt";
    sample_training_text(resolve_data(config), 100000, text);
    const std::string prefix = temp_dir() + "/trec_pieces";
    train_sentencepiece(text, prefix, 500, "unigram", {{"shrinking_factor", "0.5"}});
    return prefix + ".model";
  }();
  return path;
}

// A freshly initialised model with TREC's vocabulary and labels; every weight is moved
// by random noise so that no layer is all zeros (fastText's output layer starts so).
ModelBundle fresh_bundle(std::vector<std::string> overrides) {
  auto options = trec_options();
  for (auto& o : overrides) {
    if (o == "tokenizer.model=PIECES") o = "tokenizer.model=" + piece_model();
  }
  options.insert(options.end(), overrides.begin(), overrides.end());
  ModelBundle b;
  b.config = load_config("", options);
  b.task = build_task(resolve_data(b.config));
  torch::manual_seed(7);
  b.model = create_model(b.config.model, b.config.train.optimizer, b.task);
  torch::NoGradGuard no_grad;
  for (auto& p : b.model->parameters()) p.add_(torch::randn_like(p) * 0.1);
  b.model->eval();
  return b;
}

// TREC test questions, plus texts that test the tokenizers' corners: empty, only unknown
// words, capitals outside ASCII, punctuation, and a long text.
std::vector<std::string> test_texts(const SiftConfig& config) {
  auto split = open_split(resolve_data(config), Split::test, LabelSet());
  std::vector<std::string> texts;
  std::string long_text;
  Example example;
  while (split->next(example) && texts.size() < 80) {
    texts.push_back(example.text);
    long_text += example.text + " ";
  }
  texts.push_back("");
  texts.push_back("zzqxj wwvkkq");
  texts.push_back("WHAT IS the ÉCOLE's name in ΑΘΗΝΑ, Straße or МОСКВА?!");
  texts.push_back("tabs\tand\u00a0no-break spaces ... (parentheses) \"quotes\"");
  texts.push_back(long_text);
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

// The logits examples/classify.py computes for `texts` from the exported file alone.
torch::Tensor python_logits(const std::string& model, const std::vector<std::string>& texts,
                            const std::string& args = "") {
  const std::string input = model + ".texts", output = model + ".logits", err = model + ".err";
  std::string lines;
  for (const auto& t : texts) lines += t + "\n";
  testing::write_file(input, lines);
  const std::string command = "/usr/bin/python3 " + kSource + "/examples/classify.py " + model +
                              " " + input + " --logits " + args + " >" + output + " 2>" + err;
  const int status = std::system(command.c_str());
  EXPECT_EQ(status, 0) << testing::slurp(err);
  std::vector<torch::Tensor> rows;
  std::istringstream in(testing::slurp(output));
  for (std::string line; std::getline(in, line);) {
    rows.push_back(
        torch::tensor(nlohmann::json::parse(line).get<std::vector<double>>(), torch::kFloat64));
  }
  if (rows.size() != texts.size()) {
    ADD_FAILURE() << "classify.py printed " << rows.size() << " rows for " << texts.size()
                  << " texts\n"
                  << testing::slurp(err);
    return torch::zeros({0});
  }
  return torch::stack(rows).to(torch::kFloat32);
}

// Bytes of an export's parameters and buffers.
double weight_bytes(const ModelBundle& b) {
  auto& module = static_cast<ScriptedClassifierImpl&>(*b.model).script();
  double bytes = 0;
  for (const auto& p : module.named_parameters(false)) bytes += p.value.nbytes();
  for (const auto& p : module.named_buffers(false)) bytes += p.value.nbytes();
  return bytes;
}

double max_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

struct ModelCase {
  std::string name;
  std::vector<std::string> overrides;
};

// The test names of ctest show the case's name, not its bytes.
void PrintTo(const ModelCase& c, std::ostream* os) { *os << c.name; }

class ExportEveryModel : public ::testing::TestWithParam<ModelCase> {};

TEST_P(ExportEveryModel, TrainingModuleCppExportAndPythonExportAgree) {
  ModelBundle trained = fresh_bundle(GetParam().overrides);
  const std::string path = temp_dir() + "/" + GetParam().name + ".pt";
  export_run(trained, path);
  const auto texts = test_texts(trained.config);
  const torch::Tensor expected = logits_of(trained, texts);
  ASSERT_GT(expected.std().item<double>(), 1e-3) << "logits too uniform to tell models apart";

  ModelBundle loaded = load_export(path);
  EXPECT_EQ(loaded.task.labels.names(), trained.task.labels.names());
  const torch::Tensor cpp = logits_of(loaded, texts);
  ASSERT_EQ(cpp.sizes(), expected.sizes());
  EXPECT_LT(max_diff(cpp, expected), kTolerance);
  EXPECT_TRUE(torch::equal(cpp.argmax(1), expected.argmax(1)));

  const torch::Tensor python = python_logits(path, texts);
  ASSERT_EQ(python.sizes(), expected.sizes());
  EXPECT_LT(max_diff(python, expected), kTolerance);
  EXPECT_TRUE(torch::equal(python.argmax(1), expected.argmax(1)));
}

// int8 logits stay within this fraction of the largest fp32 logit: weights are rounded to
// 1/254 of their row's range and activations to 1/255 of the batch's, layer after layer.
constexpr double kInt8Tolerance = 0.1;

// The packed int8 weights of an export, as its sift_format.json lists them.
std::vector<std::string> packed_of(const std::string& path) {
  torch::jit::ExtraFilesMap extra{{kExportFormatFile, ""}};
  torch::jit::load(path, torch::kCPU, extra);
  return nlohmann::json::parse(extra[kExportFormatFile])
      .value("packed", std::vector<std::string>{});
}

// int8 with every Linear product on the int8 kernel (the default leaves the small products
// of these small models in fp32).
ExportOptions int8_options() {
  ExportOptions options;
  options.quantize = "int8";
  options.int8_min_macs = 0;
  return options;
}

// Sets the process's quantized engine for one scope.
class EngineScope {
 public:
  explicit EngineScope(const std::string& name) : saved_(quantized_engine()) {
    use_quantized_engine(name);
  }
  ~EngineScope() { use_quantized_engine(saved_); }

 private:
  std::string saved_;
};

// int8: a smaller file whose Linear layers run packed int8 kernels, whose C++ and Python
// logits agree with each other (same engine) and stay close to fp32's.
TEST_P(ExportEveryModel, Int8ExportIsSmallerAndAgreesAcrossLanguages) {
  ModelBundle trained = fresh_bundle(GetParam().overrides);
  const std::string fp32 = temp_dir() + "/" + GetParam().name + "_fp32.pt";
  const std::string int8 = temp_dir() + "/" + GetParam().name + "_int8.pt";
  export_run(trained, fp32);
  export_run(trained, int8, int8_options());
  EXPECT_LT(fs::file_size(int8), fs::file_size(fp32));
  // Every model's output layer at least is packed for the int8 kernels.
  const auto packed = packed_of(int8);
  EXPECT_NE(std::find(packed.begin(), packed.end(), "output_weight_packed"), packed.end());
  const auto texts = test_texts(trained.config);
  const torch::Tensor expected = logits_of(trained, texts);
  ModelBundle loaded = load_export(int8);
  const torch::Tensor cpp = logits_of(loaded, texts);
  const double scale = expected.abs().max().item<double>();
  EXPECT_LT(max_diff(cpp, expected), kInt8Tolerance * scale);
  EXPECT_GT(max_diff(cpp, expected), 0.0) << "int8 should not be bit-identical";
  const torch::Tensor python =
      python_logits(int8, texts, "--quantized-engine " + quantized_engine());
  ASSERT_EQ(python.sizes(), cpp.sizes());
  EXPECT_LT(max_diff(python, cpp), kTolerance);
}

// A file written under this process's engine loads, checks its weights and predicts in a
// process (C++ and Python) that set another engine.
TEST_P(ExportEveryModel, Int8ExportRunsUnderEveryOtherEngine) {
  ModelBundle trained = fresh_bundle(GetParam().overrides);
  const std::string int8 = temp_dir() + "/" + GetParam().name + "_engines.pt";
  export_run(trained, int8, int8_options());
  const auto texts = test_texts(trained.config);
  const torch::Tensor expected = logits_of(trained, texts);
  const double scale = expected.abs().max().item<double>();
  const std::string writer = quantized_engine();
  for (const auto& engine : quantized_engines()) {
    if (engine == writer) continue;
    SCOPED_TRACE("engine " + engine);
    EngineScope scope(engine);
    ModelBundle loaded = load_export(int8);
    const torch::Tensor cpp = logits_of(loaded, texts);
    EXPECT_LT(max_diff(cpp, expected), kInt8Tolerance * scale);
    const torch::Tensor python = python_logits(int8, texts, "--quantized-engine " + engine);
    ASSERT_EQ(python.sizes(), cpp.sizes());
    EXPECT_LT(max_diff(python, cpp), kTolerance);
  }
}

// bf16: half the bytes, fp32 logits close to fp32's, the same in C++ and Python.
TEST_P(ExportEveryModel, Bf16ExportComputesInBf16AndAgreesAcrossLanguages) {
  ModelBundle trained = fresh_bundle(GetParam().overrides);
  const std::string path = temp_dir() + "/" + GetParam().name + "_bf16.pt";
  ExportOptions options;
  options.dtype = "bf16";
  export_run(trained, path, options);
  const auto texts = test_texts(trained.config);
  const torch::Tensor expected = logits_of(trained, texts);
  const std::string fp32 = temp_dir() + "/" + GetParam().name + "_fp32_too.pt";
  export_run(trained, fp32);
  ModelBundle loaded = load_export(path);
  EXPECT_LT(weight_bytes(loaded), 0.51 * weight_bytes(load_export(fp32)));
  auto& module = static_cast<ScriptedClassifierImpl&>(*loaded.model).script();
  for (const auto& p : module.named_parameters(false)) {
    if (p.value.is_floating_point()) {
      EXPECT_EQ(p.value.scalar_type(), torch::kBFloat16) << p.name;
    }
  }
  const torch::Tensor cpp = logits_of(loaded, texts);
  EXPECT_EQ(cpp.scalar_type(), torch::kFloat);
  // bf16 keeps 8 bits of mantissa: about 0.4% a rounding, over a few layers.
  EXPECT_LT(max_diff(cpp, expected), 0.05 * expected.abs().max().item<double>());
  const torch::Tensor python = python_logits(path, texts);
  ASSERT_EQ(python.sizes(), cpp.sizes());
  EXPECT_LT(max_diff(python, cpp), kTolerance);
}

INSTANTIATE_TEST_SUITE_P(
    Models, ExportEveryModel,
    ::testing::Values(
        ModelCase{"fasttext_bigrams",
                  {"model.type=fasttext", "model.dim=16", "model.ngrams=2", "model.buckets=20000",
                   "data.max_length=12"}},
        ModelCase{"fasttext_pieces",
                  {"model.type=fasttext", "model.dim=16", "model.ngrams=3", "model.buckets=5000",
                   "tokenizer.type=sentencepiece", "tokenizer.model=PIECES"}},
        ModelCase{"mlp_bigrams",
                  {"model.type=mlp", "model.dim=16", "model.hidden=12", "model.layers=2",
                   "model.ngrams=2", "model.buckets=20000", "model.dropout=0.3"}},
        ModelCase{
            "textcnn",
            {"model.type=textcnn", "model.dim=16", "model.filters=8", "model.widths=[1, 3, 5]"}},
        ModelCase{"textcnn_pieces",
                  {"model.type=textcnn", "model.dim=12", "model.filters=6",
                   "tokenizer.type=sentencepiece", "tokenizer.model=PIECES", "data.max_length=10"}},
        ModelCase{"bilstm_max",
                  {"model.type=rnn", "model.cell=lstm", "model.dim=16", "model.hidden=12",
                   "model.layers=2", "model.bidirectional=true", "model.pooling=max"}},
        ModelCase{"gru_mean",
                  {"model.type=rnn", "model.cell=gru", "model.dim=16", "model.hidden=10",
                   "model.layers=1", "model.bidirectional=false", "model.pooling=mean"}},
        ModelCase{"lstm_attention",
                  {"model.type=rnn", "model.cell=lstm", "model.dim=16", "model.hidden=8",
                   "model.layers=1", "model.bidirectional=true", "model.pooling=attention",
                   "tokenizer.lowercase=false", "tokenizer.split_punctuation=false"}},
        ModelCase{"transformer_cls_learned",
                  {"model.type=transformer", "model.dim=16", "model.heads=4", "model.layers=2",
                   "model.ff_dim=32", "model.pooling=cls", "model.positions=learned",
                   "model.max_positions=64"}},
        ModelCase{"transformer_mean_sinusoidal",
                  {"model.type=transformer", "model.dim=16", "model.heads=2", "model.layers=1",
                   "model.ff_dim=24", "model.pooling=mean", "model.positions=sinusoidal",
                   "model.max_positions=8"}},
        ModelCase{"transformer_max",
                  {"model.type=transformer", "model.dim=8", "model.heads=2", "model.layers=2",
                   "model.ff_dim=16", "model.pooling=max", "model.max_positions=32"}}),
    [](const ::testing::TestParamInfo<ModelCase>& param_info) { return param_info.param.name; });

// int8 Linear inputs of a few rows run on a quantization range rounded up to a grid, so
// oneDNN's reorders come from its cache (ScriptWriter::linear). The range stays symmetric:
// with its two ends rounded apart, a scale seen before with another zero point came back
// wrong from LibTorch 1.13's onednn kernel (8% of 4,000 mixed calls off by more than 5%).
// Many calls of varied shape, single texts, small batches and one batch past
// kInt8AnchorMaxValues (the plain kernel), interleaved, each stay close to fp32.
TEST(ExportInt8, ManyCallsOfVariedShapeStayCloseToFp32) {
  ModelBundle trained =
      fresh_bundle({"model.type=transformer", "model.dim=16", "model.heads=4", "model.layers=2",
                    "model.ff_dim=32", "model.pooling=mean", "model.max_positions=64"});
  const std::string path = temp_dir() + "/int8_varied_calls.pt";
  export_run(trained, path, int8_options());
  ModelBundle loaded = load_export(path);
  const auto texts = test_texts(trained.config);
  const std::vector<std::string> large(kInt8AnchorMaxValues / (16 * 8), texts.back());
  const torch::Tensor large_expected = logits_of(trained, large);
  for (size_t call = 0; call < 240; ++call) {
    std::vector<std::string> group;
    for (size_t i = 0; i <= call % 4; ++i)
      group.push_back(texts[(call * 7 + i * 13) % texts.size()]);
    const torch::Tensor expected = logits_of(trained, group);
    const double scale = expected.abs().max().item<double>();
    ASSERT_LT(max_diff(logits_of(loaded, group), expected), kInt8Tolerance * scale)
        << "call " << call << ", " << group.size() << " texts";
    if (call % 40 == 39) {
      ASSERT_LT(max_diff(logits_of(loaded, large), large_expected),
                kInt8Tolerance * large_expected.abs().max().item<double>());
    }
  }
}

// The products too small for the int8 kernel run in fp32 on weights that Sift's loader
// dequantizes once (prepare_weights), not at each call: the file keeps them None (it stays
// int8-sized), the loaded model holds each packed Linear's weights in fp32, and its logits
// are those of the same file run without them (unpacked at each call), bit for bit.
TEST(ExportInt8, SmallProductsRunOnWeightsTheLoaderDequantizedOnce) {
  ModelBundle trained =
      fresh_bundle({"model.type=transformer", "model.dim=16", "model.heads=4", "model.layers=2",
                    "model.ff_dim=32", "model.pooling=mean", "model.max_positions=64"});
  const std::string path = temp_dir() + "/int8_prepared.pt";
  ExportOptions options;
  options.quantize = "int8";  // the default threshold: these products all run in fp32
  export_run(trained, path, options);
  torch::jit::Module raw = torch::jit::load(path);
  ModelBundle loaded = load_export(path);
  torch::jit::Module& prepared = dynamic_cast<ScriptedClassifierImpl&>(*loaded.model).script();
  const auto packed = packed_of(path);
  ASSERT_FALSE(packed.empty());
  for (const std::string& name : packed) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(raw.attr(name + "_fp32").isNone());
    const c10::IValue kept = prepared.attr(name + "_fp32");
    ASSERT_TRUE(kept.isTensor());
    EXPECT_EQ(kept.toTensor().dim(), 2);
    EXPECT_EQ(kept.toTensor().scalar_type(), torch::kFloat);
  }
  const auto texts = test_texts(trained.config);
  ModelBundle unprepared = load_export(path);
  auto& script = dynamic_cast<ScriptedClassifierImpl&>(*unprepared.model).script();
  for (const std::string& name : packed) script.setattr(name + "_fp32", c10::IValue());
  EXPECT_TRUE(torch::equal(logits_of(loaded, texts), logits_of(unprepared, texts)));
}

TEST(ExportOptionsCheck, Bf16WithInt8AndUnknownEnginesAreRefusedByName) {
  ModelBundle b = fresh_bundle({"model.type=fasttext", "model.dim=8"});
  ExportOptions options;
  options.dtype = "bf16";
  options.quantize = "int8";
  std::string message = error_of([&] { export_run(b, temp_dir() + "/both.pt", options); });
  EXPECT_NE(message.find("--dtype bf16 --quantize int8"), std::string::npos) << message;
  options = ExportOptions{};
  options.dtype = "fp16";
  message = error_of([&] { export_run(b, temp_dir() + "/fp16.pt", options); });
  EXPECT_NE(message.find("--dtype"), std::string::npos) << message;
  message = error_of([] { use_quantized_engine("tpu"); });
  EXPECT_NE(message.find("no quantized engine 'tpu'"), std::string::npos) << message;
  for (const auto& engine : quantized_engines()) {
    EXPECT_NE(message.find(engine), std::string::npos) << message;
  }
}

// ---- pq (fastText's quantize) ---------------------------------------------------------

ExportOptions pq_options(int64_t cutoff, bool qnorm = false, bool qout = false) {
  ExportOptions options;
  options.quantize = "pq";
  options.cutoff = cutoff;
  options.qnorm = qnorm;
  options.qout = qout;
  return options;
}

nlohmann::json format_of(const std::string& path) {
  torch::jit::ExtraFilesMap extra{{kExportFormatFile, ""}};
  torch::jit::load(path, torch::kCPU, extra);
  return nlohmann::json::parse(extra[kExportFormatFile]);
}

ModelBundle fasttext_bundle() {
  return fresh_bundle(
      {"model.type=fasttext", "model.dim=8", "model.ngrams=2", "model.buckets=3000"});
}

torch::Tensor embedding_of(ModelBundle& b) {
  return b.model->named_parameters()["embedding.weight"];
}

// The logits of `b` with the ids whose rows `kept` leaves out dropped from their bags.
torch::Tensor logits_without_cut_ids(ModelBundle& b, const std::vector<std::string>& texts,
                                     const torch::Tensor& kept) {
  TextEncoder encoder = make_encoder(b.task);
  RawBatch batch;
  std::vector<int64_t> ids;
  const auto* keep = kept.data_ptr<bool>();
  for (const auto& text : texts) {
    encoder.encode(text, ids);
    batch.offsets.push_back(static_cast<int64_t>(batch.ids.size()));
    for (const int64_t id : ids) {
      if (keep[id]) batch.ids.push_back(id);
    }
    batch.labels.push_back(0);
  }
  torch::NoGradGuard no_grad;
  return b.model->forward(to_input(batch, b.task.encoder.kind, torch::kCPU));
}

TEST(PqExport, CutoffKeepsExactlyTheRowsOfTheKLargestNorms) {
  torch::manual_seed(2);
  const torch::Tensor table = torch::randn({5000, 6});
  const torch::Tensor kept = top_norm_rows(table, 1234);
  EXPECT_EQ(kept.sum().item<int64_t>(), 1234);
  const torch::Tensor norms = table.norm(2, 1);
  EXPECT_GE(norms.masked_select(kept).min().item<double>(),
            norms.masked_select(~kept).max().item<double>());
  // Ties go to the lower id, so the choice never depends on the sort.
  const torch::Tensor ties = top_norm_rows(torch::ones({10, 2}), 3);
  EXPECT_TRUE(torch::equal(ties.nonzero().view({-1}), torch::arange(3)));
}

// A table of at most 256 distinct sub-vectors a position quantizes exactly, so the export
// must give the logits of the trained model with the cut ids left out of their bags (the
// cut words gone from its vocabulary, the buckets renumbered after the kept ones): in C++
// and in Python, with and without qnorm.
TEST(PqExport, CutIdsLeaveTheirBagsAndExactCodesGiveTheModelsLogits) {
  ModelBundle b = fasttext_bundle();
  {
    torch::NoGradGuard no_grad;
    // Three levels a weight: 9 distinct sub-vectors, a few hundred distinct norms.
    auto w = embedding_of(b);
    w.copy_(torch::round(w * 10).clamp(-1, 1) * 0.3);
  }
  const int64_t rows = embedding_of(b).size(0), cutoff = rows / 3;
  const auto texts = test_texts(b.config);
  const torch::Tensor kept = top_norm_rows(embedding_of(b), cutoff);
  const torch::Tensor expected = logits_without_cut_ids(b, texts, kept);
  ASSERT_GT(max_diff(expected, logits_of(b, texts)), 1e-3) << "the cutoff changed nothing";
  for (const bool qnorm : {false, true}) {
    SCOPED_TRACE(qnorm ? "qnorm" : "no qnorm");
    const std::string path = temp_dir() + "/pq_exact.pt";
    export_run(b, path, pq_options(cutoff, qnorm));
    ModelBundle loaded = load_export(path);
    const torch::Tensor cpp = logits_of(loaded, texts);
    ASSERT_EQ(cpp.sizes(), expected.sizes());
    // qnorm multiplies unit rows back by their norm: float rounding only.
    EXPECT_LT(max_diff(cpp, expected), qnorm ? 1e-4 : kTolerance);
    const torch::Tensor python = python_logits(path, texts);
    ASSERT_EQ(python.sizes(), cpp.sizes());
    EXPECT_LT(max_diff(python, cpp), kTolerance);
    const auto pq = format_of(path).at("pq");
    EXPECT_EQ(format_of(path).at("quantize"), "pq");
    EXPECT_EQ(pq.at("dsub"), 2);
    EXPECT_EQ(pq.at("cutoff"), cutoff);
    EXPECT_EQ(pq.at("rows"), cutoff);
    // The words whose rows were cut left the vocabulary, as fastText prunes its dictionary.
    EXPECT_LT(pq.at("vocabulary").get<int64_t>(), b.task.vocab->size());
    EXPECT_EQ(loaded.task.vocab->size(), pq.at("vocabulary").get<int64_t>());
    EXPECT_EQ(pq.at("qnorm"), qnorm);
  }
}

// Without cutoff, codes of 1 byte a 2-dim sub-vector against 8 bytes of fp32: the table
// shrinks 8x, plus 256 centroids a position. With --qout the output matrix is coded too;
// C++ and Python agree and stay close to the unquantized logits.
TEST(PqExport, TableIsEightTimesSmallerAndQoutQnormAgreeAcrossLanguages) {
  ModelBundle b = fresh_bundle(
      {"model.type=fasttext", "model.dim=16", "model.ngrams=2", "model.buckets=20000"});
  const std::string fp32 = temp_dir() + "/pq_fp32.pt", pq = temp_dir() + "/pq_all.pt";
  export_run(b, fp32);
  export_run(b, pq, pq_options(0, true, true));
  const int64_t rows = embedding_of(b).size(0), dim = 16;
  const double table_fp32 = static_cast<double>(rows * dim * 4);
  // Codes, norm codes, then the centroids of the table and of the output matrix (each
  // dim / 2 positions of 256 x 2 floats, and 256 norms).
  const double expected =
      table_fp32 / 8 + static_cast<double>(rows) + 2.0 * (dim / 2 * 256 * 2 * 4 + 256 * 4);
  ModelBundle loaded = load_export(pq);
  const double fp32_bytes = weight_bytes(load_export(fp32)), pq_bytes = weight_bytes(loaded);
  EXPECT_LT(pq_bytes, expected * 1.02 + 4096) << pq_bytes << " vs fp32 " << fp32_bytes;
  EXPECT_LT(pq_bytes, 0.18 * fp32_bytes);  // 0.166 here
  // The file shrinks by what its weights do: the extra files (vocabulary, Unicode tables:
  // 55 KB of a 292 KB pq file here) are the same in both; the pq file's longer code and
  // pickle and its more zip entries add about 6 KB.
  const double file_saving =
      static_cast<double>(fs::file_size(fp32)) - static_cast<double>(fs::file_size(pq));
  EXPECT_NEAR(file_saving, fp32_bytes - pq_bytes, 16384);
  const auto texts = test_texts(b.config);
  const torch::Tensor reference = logits_of(b, texts), cpp = logits_of(loaded, texts);
  EXPECT_GT(max_diff(cpp, reference), 0.0) << "pq of random weights should not be exact";
  EXPECT_LT(max_diff(cpp, reference), 0.2 * reference.abs().max().item<double>());
  const torch::Tensor python = python_logits(pq, texts);
  ASSERT_EQ(python.sizes(), cpp.sizes());
  EXPECT_LT(max_diff(python, cpp), kTolerance);
  EXPECT_EQ(format_of(pq).at("pq").at("qout"), true);
}

TEST(PqExport, CombinationsThatDoNotApplyAreRefusedNamingTheFlag) {
  ModelBundle fasttext = fasttext_bundle();
  const int64_t rows = embedding_of(fasttext).size(0);
  const std::string out = temp_dir() + "/refused.pt";
  const auto refused = [&](ModelBundle& b, const ExportOptions& o) {
    return error_of([&] { export_run(b, out, o); });
  };
  ModelBundle textcnn = fresh_bundle({"model.type=textcnn", "model.dim=8", "model.filters=4"});
  EXPECT_NE(refused(textcnn, pq_options(0)).find("--quantize pq: model 'textcnn'"),
            std::string::npos);
  ExportOptions o;
  o.cutoff = 100;
  EXPECT_NE(refused(fasttext, o).find("--cutoff: applies to --quantize pq"), std::string::npos);
  o = ExportOptions{};
  o.qnorm = true;
  EXPECT_NE(refused(fasttext, o).find("--qnorm"), std::string::npos);
  const std::string too_many = refused(fasttext, pq_options(rows + 1));
  EXPECT_NE(too_many.find("--cutoff " + std::to_string(rows + 1)), std::string::npos) << too_many;
  EXPECT_NE(too_many.find(std::to_string(rows) + " rows"), std::string::npos) << too_many;
  o = pq_options(0);
  o.dsub = 3;
  const std::string dsub = refused(fasttext, o);
  EXPECT_NE(dsub.find("--dsub 3"), std::string::npos) << dsub;
  EXPECT_NE(dsub.find("model.dim 8"), std::string::npos) << dsub;
  o = pq_options(0);
  o.dtype = "bf16";
  EXPECT_NE(refused(fasttext, o).find("--quantize pq"), std::string::npos);
  EXPECT_FALSE(fs::exists(out));
}

// ---- bad files ------------------------------------------------------------------------

class ExportFile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = new std::string(temp_dir() + "/good.pt");
    ModelBundle b = fresh_bundle(
        {"model.type=fasttext", "model.dim=16", "model.ngrams=2", "model.buckets=20000"});
    export_run(b, *path_);
  }
  static void TearDownTestSuite() { delete path_; }
  static std::string* path_;
};
std::string* ExportFile::path_ = nullptr;

TEST_F(ExportFile, TruncatedFileIsNamed) {
  const std::string bytes = testing::slurp(*path_);
  const std::string bad = temp_dir() + "/truncated.pt";
  testing::write_file(bad, bytes.substr(0, bytes.size() / 2));
  const std::string message = error_of([&] { load_export(bad); });
  EXPECT_NE(message.find(bad + " is truncated or corrupted"), std::string::npos) << message;
}

TEST_F(ExportFile, FlippedWeightByteIsCaughtByTheChecksum) {
  std::string bytes = testing::slurp(*path_);
  // The 20000 x 16 embedding fills most of the file: its middle is weight data.
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x40);
  const std::string bad = temp_dir() + "/flipped.pt";
  testing::write_file(bad, bytes);
  const std::string message = error_of([&] { load_export(bad); });
  EXPECT_NE(message.find(bad + " is corrupted"), std::string::npos) << message;
  EXPECT_NE(message.find("weights"), std::string::npos) << message;
}

TEST_F(ExportFile, FilesThatAreNotOursAreRefused) {
  const std::string text = temp_dir() + "/notes.pt";
  testing::write_file(text, "just some text\n");
  std::string message = error_of([&] { load_export(text); });
  EXPECT_NE(message.find(text + " is not a Sift export"), std::string::npos) << message;

  // A TorchScript archive, but from someone else.
  torch::jit::Module other("other.Module");
  other.define("def forward(self, x: Tensor) -> Tensor:\n    return x\n");
  const std::string foreign = temp_dir() + "/foreign.pt";
  other.save(foreign);
  message = error_of([&] { load_export(foreign); });
  EXPECT_NE(message.find(foreign + " is a TorchScript file but not a Sift export"),
            std::string::npos)
      << message;

  message = error_of([&] { load_model(temp_dir() + "/missing.pt"); });
  EXPECT_NE(message.find("missing.pt is not a run folder or an exported model"), std::string::npos)
      << message;
}

TEST_F(ExportFile, NewerFormatVersionIsRefusedByCppAndPython) {
  torch::jit::ExtraFilesMap extra;
  for (const char* name : {kExportFormatFile, kExportTokenizerFile, kExportLabelsFile,
                           kExportVocabFile, kExportConfigFile}) {
    extra[name] = "";
  }
  torch::jit::Module module = torch::jit::load(*path_, torch::kCPU, extra);
  auto format = nlohmann::json::parse(extra[kExportFormatFile]);
  format["version"] = kExportFormatVersion + 1;
  extra[kExportFormatFile] = format.dump();
  const std::string newer = temp_dir() + "/newer.pt";
  module.save(newer, extra);
  const std::string message = error_of([&] { load_export(newer); });
  EXPECT_NE(message.find(newer + " is in Sift export format version 2, newer than this sift "
                                 "reads (up to 1)"),
            std::string::npos)
      << message;

  const std::string err = newer + ".err";
  const int status = std::system(
      ("/usr/bin/python3 " + kSource + "/examples/classify.py " + newer + " </dev/null 2>" + err)
          .c_str());
  EXPECT_NE(status, 0);
  EXPECT_NE(testing::slurp(err).find("format version 2"), std::string::npos) << testing::slurp(err);
}

TEST_F(ExportFile, ExtraFilesHoldEverythingTheTokenizerNeeds) {
  torch::jit::ExtraFilesMap extra{
      {kExportTokenizerFile, ""}, {kExportFormatFile, ""}, {kExportUnicodeFile, ""}};
  torch::jit::load(*path_, torch::kCPU, extra);
  const auto tokenizer = nlohmann::json::parse(extra[kExportTokenizerFile]);
  EXPECT_EQ(tokenizer["type"], "word");
  EXPECT_EQ(tokenizer["normalize"], "none");
  // The word tokenizer's Unicode tables, from utf8proc; no NFKC data without NFKC.
  const auto unicode = nlohmann::json::parse(extra[kExportUnicodeFile]);
  EXPECT_EQ(unicode["version"], tokenizer["unicode_version"]);
  EXPECT_EQ(unicode["casefold"]["7838"], "ss");  // ẞ
  EXPECT_FALSE(unicode.contains("decompose"));
  EXPECT_EQ(tokenizer["ngrams"], 2);
  EXPECT_EQ(tokenizer["buckets"], 20000);
  EXPECT_EQ(tokenizer["lowercase"], true);
  EXPECT_EQ(tokenizer["input"], "bag");
  const auto format = nlohmann::json::parse(extra[kExportFormatFile]);
  EXPECT_EQ(format["format"], "sift-export");
  EXPECT_EQ(format["model"], "fasttext");
  EXPECT_EQ(format["version"], kExportFormatVersion);
}

}  // namespace export_test
}  // namespace sift
