// The BERT-family encoder against an independent forward in Python (python3-torch) over
// tiny random checkpoints in Hugging Face's layout that the test writes itself: BERT,
// DistilBERT and ELECTRA (narrower embeddings), read by read_hf_model; and its TorchScript.
#include "models/bert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "datasets/safetensors.h"
#include "framework/runtime/base/hf_model.h"
#include "models/embeddings.h"
#include "models/script_writer.h"
#include "tests/hf_folder.h"
#include "tests/test_files.h"

namespace sift {
namespace bert_test {

using nlohmann::json;
using sift::testing::hf_folder;
using sift::testing::make_temp_dir;
using sift::testing::slurp;
using sift::testing::write_file;

// A padded batch: [CLS] ... [SEP] of lengths 7, 3 and 1 (one token: the CLS alone).
ModelInput batch() {
  ModelInput in;
  in.ids = torch::tensor({2, 17, 9, 33, 48, 5, 3, 2, 44, 3, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0},
                         torch::kInt64)
               .view({3, 7});
  in.lengths = torch::tensor({7, 3, 1}, torch::kInt64);
  return in;
}

Bert load(const HfModel& hf) {
  ModelShape shape;
  shape.num_ids = hf.vocab_size;
  shape.num_classes = static_cast<int64_t>(hf.labels.size());
  Bert model(hf.model, shape);
  auto params = model->named_parameters();
  torch::NoGradGuard no_grad;
  EXPECT_EQ(params.size(), hf.tensors.size());
  for (const NamedTensor& t : hf.tensors) {
    EXPECT_TRUE(params.contains(t.name)) << t.name;
    if (!params.contains(t.name)) continue;
    params[t.name].copy_(torch::tensor(t.values).view(t.shape));
  }
  model->eval();
  return model;
}

torch::Tensor python_logits(const std::string& folder, const ModelInput& in) {
  const std::string input = folder + "/input.json";
  json j{{"lengths", std::vector<int64_t>(in.lengths.data_ptr<int64_t>(),
                                          in.lengths.data_ptr<int64_t>() + in.lengths.numel())}};
  for (int64_t r = 0; r < in.ids.size(0); ++r) {
    const auto row = in.ids[r].contiguous();
    j["ids"].push_back(
        std::vector<int64_t>(row.data_ptr<int64_t>(), row.data_ptr<int64_t>() + row.numel()));
  }
  write_file(input, j.dump());
  const std::string out = folder + "/logits.json", err = folder + "/err";
  const std::string cmd = "/usr/bin/python3 " + std::string(SIFT_SOURCE_DIR) +
                          "/tests/models/bert_reference.py " + folder + " " + input + " > " + out +
                          " 2> " + err;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(err);
  const auto rows = json::parse(slurp(out)).get<std::vector<std::vector<float>>>();
  std::vector<float> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return torch::tensor(flat).view({static_cast<int64_t>(rows.size()), -1});
}

// The model of `hf` (read from `folder`) gives the Python reference's logits, in C++ and
// in TorchScript; returns the C++ logits.
torch::Tensor expect_folder_logits(const std::string& folder, const HfModel& hf) {
  Bert model = load(hf);
  const ModelInput in = batch();
  torch::NoGradGuard no_grad;
  const torch::Tensor got = model->forward(in);
  const torch::Tensor want = python_logits(folder, in);
  EXPECT_EQ(got.sizes(), want.sizes());
  if (got.sizes() != want.sizes()) return got;
  EXPECT_LT((got - want).abs().max().item<double>(), 1e-5) << got << "\n" << want;
  EXPECT_GT(want.abs().max().item<double>(), 0.05) << "logits too small to tell anything";

  std::map<std::string, torch::Tensor> tensors;
  for (const auto& p : model->named_parameters()) tensors[p.key()] = p.value();
  ScriptWriter writer(tensors, WeightFormat::fp32);
  torch::jit::Module script = writer.finish(bert_script(hf.model, writer));
  const torch::Tensor scripted = script.forward({in.ids, in.lengths}).toTensor();
  EXPECT_LT((scripted - got).abs().max().item<double>(), 1e-5);
  return got;
}

void expect_python_logits(const std::string& type, const std::string& activation) {
  const std::string folder = hf_folder(type);
  const HfModel hf = read_hf_model(folder);
  EXPECT_EQ(hf.model.head_activation, activation);
  EXPECT_EQ(hf.labels, (std::vector<std::string>{"neg", "neu", "pos"}));
  expect_folder_logits(folder, hf);
}

TEST(Bert, ImportedBertGivesThePythonReferenceLogitsInCppAndTorchScript) {
  expect_python_logits("bert", "tanh");
}

TEST(Bert, ImportedDistilBertGivesThePythonReferenceLogitsInCppAndTorchScript) {
  expect_python_logits("distilbert", "relu");
}

TEST(Bert, ImportedElectraWithNarrowerEmbeddingsGivesThePythonReferenceLogits) {
  expect_python_logits("electra", "gelu");
}

// ALBERT (tests/hf_folder.h): embeddings of 16 projected to 32, 2 layer groups applied 4
// times (0, 0, 1, 1), gelu_new. Its 2 layers are the model's only ones; the same weights
// copied into 4 unshared layers give the same logits, and exact GELU other ones.
TEST(Bert, ImportedAlbertWithSharedLayersGivesThePythonReferenceLogits) {
  const std::string skip = sift::testing::no_sentencepiece();
  if (!skip.empty()) GTEST_SKIP() << skip;
  const std::string folder = sift::testing::albert_folder();
  const HfModel hf = read_hf_model(folder);
  EXPECT_EQ(hf.model.layers, 2);
  EXPECT_EQ(hf.model.layer_repeats, 2);
  EXPECT_EQ(hf.model.embedding_dim, 16);
  EXPECT_EQ(hf.model.ff_activation, "gelu_tanh");
  EXPECT_EQ(hf.piece_ids, PieceIds::albert);
  const torch::Tensor got = expect_folder_logits(folder, hf);

  ModelConfig unshared = hf.model;
  unshared.layers = 4;
  unshared.layer_repeats = 1;
  ModelShape shape;
  shape.num_ids = hf.vocab_size;
  shape.num_classes = 3;
  Bert copy(unshared, shape);
  copy->eval();
  torch::NoGradGuard no_grad;
  const Bert shared = load(hf);
  auto from = shared->named_parameters();
  for (auto& p : copy->named_parameters()) {
    std::string name = p.key();
    if (name.rfind("layers.", 0) == 0) {
      const int layer = name[7] - '0';
      name = "layers." + std::to_string(layer / 2) + name.substr(8);
    }
    ASSERT_TRUE(from.contains(name)) << name;
    p.value().copy_(from[name]);
  }
  EXPECT_LT((copy->forward(batch()) - got).abs().max().item<double>(), 1e-5);
  ModelConfig erf = hf.model;
  erf.ff_activation = "gelu";
  Bert exact(erf, shape);
  exact->eval();
  for (auto& p : exact->named_parameters()) p.value().copy_(from[p.key()]);
  EXPECT_GT((exact->forward(batch()) - got).abs().max().item<double>(), 1e-5);
}

// XLM-R (tests/hf_folder.h): positions from padding_idx + 1 = 2, one token type, the
// classifier.dense / out_proj head, LayerNorm epsilon 1e-5.
TEST(Bert, ImportedXlmRobertaGivesThePythonReferenceLogits) {
  const std::string skip = sift::testing::no_sentencepiece();
  if (!skip.empty()) GTEST_SKIP() << skip;
  const std::string folder = sift::testing::xlmr_folder();
  const HfModel hf = read_hf_model(folder);
  EXPECT_EQ(hf.model.position_offset, 2);
  EXPECT_EQ(hf.model.token_types, 1);
  EXPECT_DOUBLE_EQ(hf.model.layer_norm_eps, 1e-5);
  EXPECT_EQ(hf.model.head_activation, "tanh");
  EXPECT_EQ(hf.piece_ids, PieceIds::fairseq);
  expect_folder_logits(folder, hf);
}

TEST(Bert, PaddingNeverChangesATextsLogits) {
  const HfModel hf = read_hf_model(hf_folder("bert"));
  Bert model = load(hf);
  torch::NoGradGuard no_grad;
  const ModelInput in = batch();
  ModelInput alone;
  alone.ids = in.ids.narrow(0, 1, 1).narrow(1, 0, 3);
  alone.lengths = torch::tensor({3}, torch::kInt64);
  EXPECT_LT((model->forward(alone)[0] - model->forward(in)[1]).abs().max().item<double>(), 1e-5);
}

// A new encoder, 1 layer of 32 wide, covering `positions` positions.
ModelConfig new_encoder(int64_t positions) {
  ModelConfig config;
  config.type = "bert";
  config.dim = 32;
  config.layers = 1;
  config.heads = 4;
  config.ff_dim = 64;
  config.max_positions = positions;
  config.pooling = "cls";
  return config;
}

// Built for pretraining: 50 ids, the masked-token head, no classes.
ModelShape pretraining_shape() {
  ModelShape shape;
  shape.num_ids = 50;
  shape.num_classes = 0;
  shape.masked_lm = true;
  return shape;
}

// Max pooling is the Transformer's pool_tokens over the real tokens; RNN's attention pooling
// is not an encoder's, and is refused naming the key.
TEST(Bert, PoolsByClsMeanOrMaxAndRefusesAttentionNamingTheKey) {
  ModelConfig config = new_encoder(16);
  config.pooling = "max";
  ModelShape shape = pretraining_shape();
  shape.num_classes = 2;
  EXPECT_NO_THROW(Bert(config, shape));
  config.pooling = "attention";
  try {
    Bert refused(config, shape);
    FAIL() << "attention pooling was accepted";
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(),
                 "model.pooling: The BERT-family encoder pools with 'cls', 'mean' or 'max', not "
                 "'attention'.");
  }
}

// A new encoder (not imported) starts with a zero token-type table: every token of a
// one-segment text adds row 0, and a drawn row would be a vector all tokens share, a third
// of their input (with it `sift pretrain` learned the 40-word cycle at half the reference's
// pace, docs/pretraining.md). The other weights keep BERT's N(0, 0.02).
TEST(Bert, ANewEncoderAddsNoTokenTypeVectorThatEveryTokenShares) {
  ModelConfig config = new_encoder(16);
  ModelShape shape = pretraining_shape();
  Bert model(config, shape);
  auto params = model->named_parameters();
  ASSERT_TRUE(params.contains("token_types.weight"));
  EXPECT_EQ(params["token_types.weight"].abs().max().item<double>(), 0.0);
  const torch::Tensor embedding = params["embedding.weight"];
  EXPECT_NEAR(embedding.std().item<double>(), 0.02, 0.002);
  // Two ids at one position differ by their embedding rows alone, as without token types.
  torch::NoGradGuard no_grad;
  model->eval();
  ModelInput in;
  in.ids = torch::tensor({7, 9}, torch::kInt64).view({2, 1});
  in.lengths = torch::tensor({1, 1}, torch::kInt64);
  ModelConfig without = config;
  without.token_types = 0;
  Bert plain(without, shape);
  plain->eval();
  for (auto& p : plain->named_parameters()) p.value().copy_(params[p.key()]);
  const torch::Tensor positions = torch::tensor({0, 1}, torch::kInt64);
  EXPECT_TRUE(torch::equal(model->masked_token_logits(in, positions),
                           plain->masked_token_logits(in, positions)));
}

// model.positions sinusoidal: a new encoder's position table starts as Vaswani et al.'s
// sinusoids at the drawn table's spread (so nearby positions start alike: rows 3 and 4 have
// a cosine above 0.9, rows 3 and 40 below it), and every other weight keeps the draw a
// learned table's encoder has (the same seed, the same weights but that table).
TEST(Bert, ASinusoidalPositionTableStartsAsSinusoidsAndLeavesEveryOtherDraw) {
  ModelConfig config = new_encoder(64);
  const ModelShape shape = pretraining_shape();
  torch::manual_seed(5);
  Bert learned(config, shape);
  config.positions = "sinusoidal";
  torch::manual_seed(5);
  Bert sinusoidal(config, shape);
  auto mine = sinusoidal->named_parameters();
  const torch::Tensor table = mine["positions.weight"];
  EXPECT_TRUE(torch::allclose(table, sinusoidal_table(64, 32) * (0.02 * std::sqrt(2.0))));
  EXPECT_NEAR(table.pow(2).mean().sqrt().item<double>(), 0.02, 1e-3);
  const auto cosine = [&](int64_t a, int64_t b) {
    return torch::cosine_similarity(table[a], table[b], 0).item<double>();
  };
  EXPECT_GT(cosine(3, 4), 0.9);
  EXPECT_LT(cosine(3, 40), 0.9);
  for (const auto& p : learned->named_parameters()) {
    if (p.key() == "positions.weight") continue;
    EXPECT_TRUE(torch::equal(p.value(), mine[p.key()])) << p.key();
  }
}

// Built for pretraining, the encoder's masked-token scores are BERT's prediction head
// (dense, GELU, LayerNorm) against the input embedding table itself plus a bias: the head
// holds no [ids, width] matrix of its own, and the scores follow the table.
TEST(Bert, TheMaskedTokenHeadScoresAgainstTheInputEmbeddings) {
  const HfModel hf = read_hf_model(hf_folder("electra"));  // narrower embeddings: 16 of 32
  ModelShape shape;
  shape.num_ids = hf.vocab_size;
  shape.num_classes = 0;
  shape.masked_lm = true;
  Bert model(hf.model, shape);
  model->eval();
  for (const auto& p : model->named_parameters()) {
    if (p.key().rfind("mlm.", 0) != 0) continue;
    EXPECT_NE(p.value().sizes().vec(), (std::vector<int64_t>{hf.vocab_size, 16})) << p.key();
  }
  torch::NoGradGuard no_grad;
  const ModelInput in = batch();
  const torch::Tensor positions = torch::tensor({1, 2, 8}, torch::kInt64);
  const torch::Tensor scores = model->masked_token_logits(in, positions);
  ASSERT_EQ(scores.sizes().vec(), (std::vector<int64_t>{3, hf.vocab_size}));
  // Row 40 of the input table, which no input id reads, moves score 40 alone.
  // (Not a constant: the head's LayerNorm states sum to zero.)
  model->named_parameters()["embedding.weight"][40].add_(torch::arange(16).to(torch::kFloat32));
  const torch::Tensor after = model->masked_token_logits(in, positions);
  const auto others = torch::arange(hf.vocab_size).ne(40);
  EXPECT_TRUE(torch::equal(after.index({torch::indexing::Slice(), others}),
                           scores.index({torch::indexing::Slice(), others})));
  EXPECT_GT((after.select(1, 40) - scores.select(1, 40)).abs().min().item<double>(), 1e-4);
  // A classifier has no such head.
  ModelShape plain = shape;
  plain.masked_lm = false;
  plain.num_classes = 2;
  EXPECT_FALSE(Bert(hf.model, plain)->masked_token_logits(in, positions).defined());
}

// model.pre_norm (Cramming's pre-LN): LayerNorm before each sublayer and once after the
// last block ("final_norm"); its TorchScript gives the C++ logits, padding changes nothing,
// and the same weights read post-LN give other logits.
TEST(Bert, APreNormEncoderScriptsAsItComputesAndDiffersFromPostNorm) {
  HfModel hf = read_hf_model(hf_folder("bert"));
  hf.model.pre_norm = true;
  ModelShape shape;
  shape.num_ids = hf.vocab_size;
  shape.num_classes = 3;
  Bert pre(hf.model, shape);
  pre->eval();
  torch::NoGradGuard no_grad;
  auto params = pre->named_parameters();
  ASSERT_TRUE(params.contains("final_norm.weight"));
  for (auto& p : params) p.value().normal_(0.0, 0.3);  // weights far from LayerNorm's unit ones
  const ModelInput in = batch();
  const torch::Tensor got = pre->forward(in);
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& p : params) tensors[p.key()] = p.value();
  ScriptWriter writer(tensors, WeightFormat::fp32);
  torch::jit::Module script = writer.finish(bert_script(hf.model, writer));
  EXPECT_LT((script.forward({in.ids, in.lengths}).toTensor() - got).abs().max().item<double>(),
            1e-5);
  ModelInput alone;
  alone.ids = in.ids.narrow(0, 1, 1).narrow(1, 0, 3);
  alone.lengths = torch::tensor({3}, torch::kInt64);
  EXPECT_LT((pre->forward(alone)[0] - got[1]).abs().max().item<double>(), 1e-5);
  ModelConfig post_config = hf.model;
  post_config.pre_norm = false;
  Bert post(post_config, shape);
  post->eval();
  for (auto& p : post->named_parameters()) p.value().copy_(params[p.key()]);
  EXPECT_GT((post->forward(in) - got).abs().max().item<double>(), 1e-3);
}

// A `sift pretrain` run exports its encoder alone (bert_encoder_script): forward(ids,
// attention_mask) gives every real token's state as the model computes it (the model's own
// masked-token head over the script's states gives the model's scores), masked_token_scores()
// those scores itself, and pooled() the vector its classifier's head reads ([CLS], or the
// mean or maximum over the mask).
TEST(Bert, TheEncoderScriptGivesTheModelsTokenStatesMaskedTokenScoresAndPooledVector) {
  const HfModel hf = read_hf_model(hf_folder("electra"));  // narrower embeddings: 16 of 32
  for (const std::string pooling : {"cls", "mean", "max"}) {
    ModelConfig config = hf.model;
    config.pooling = pooling;
    config.pre_norm = pooling == "mean";  // post-LN with cls, pre-LN with mean
    ModelShape shape;
    shape.num_ids = hf.vocab_size;
    shape.num_classes = 2;
    shape.masked_lm = true;
    Bert model(config, shape);
    model->eval();
    torch::NoGradGuard no_grad;
    std::map<std::string, torch::Tensor> tensors;
    for (const auto& p : model->named_parameters()) tensors[p.key()] = p.value();
    ScriptWriter writer(tensors, WeightFormat::fp32);
    torch::jit::Module script = writer.finish(bert_encoder_script(config, writer));
    const ModelInput in = batch();
    const torch::Tensor mask =
        (torch::arange(7).unsqueeze(0) < in.lengths.unsqueeze(1)).to(torch::kInt64);
    const torch::Tensor states = script.forward({in.ids, mask}).toTensor();
    ASSERT_EQ(states.sizes().vec(), (std::vector<int64_t>{3, 7, config.dim}));
    // Every real token: rows 0 (7 tokens), 1 (3) and 2 (1).
    const torch::Tensor positions =
        torch::tensor({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 14}, torch::kInt64);
    auto head = std::dynamic_pointer_cast<MaskedLmHeadImpl>(model->named_modules()["mlm"]);
    ASSERT_TRUE(head);
    const torch::Tensor scores =
        head->forward(states.reshape({-1, config.dim}).index_select(0, positions),
                      model->named_parameters()["embedding.weight"]);
    const torch::Tensor want = model->masked_token_logits(in, positions);
    EXPECT_LT((scores - want).abs().max().item<double>(), 1e-4) << pooling;
    EXPECT_GT(want.std().item<double>(), 0.01) << "scores too alike to tell anything";
    // The exported head itself: a score for every id at every position.
    const torch::Tensor exported =
        script.run_method("masked_token_scores", in.ids, mask).toTensor();
    ASSERT_EQ(exported.sizes().vec(), (std::vector<int64_t>{3, 7, hf.vocab_size}));
    EXPECT_LT((exported.reshape({-1, hf.vocab_size}).index_select(0, positions) - want)
                  .abs()
                  .max()
                  .item<double>(),
              1e-4)
        << pooling;
    // The classifier's head over pooled() gives the model's logits.
    const torch::Tensor pooled = script.run_method("pooled", in.ids, mask).toTensor();
    ASSERT_EQ(pooled.sizes().vec(), (std::vector<int64_t>{3, config.dim}));
    auto p = model->named_parameters();
    const torch::Tensor h =
        torch::gelu(torch::nn::functional::linear(pooled, p["head.weight"], p["head.bias"]));
    const torch::Tensor logits =
        torch::nn::functional::linear(h, p["output.weight"], p["output.bias"]);
    EXPECT_LT((logits - model->forward(in)).abs().max().item<double>(), 1e-5) << pooling;
  }
}

TEST(HfModel, UnsupportedTypesAndMissingPiecesAreRefusedNamingThem) {
  const std::string folder = hf_folder("bert");
  json config = json::parse(slurp(folder + "/config.json"));
  config["model_type"] = "roberta";
  write_file(folder + "/config.json", config.dump());
  EXPECT_CONTAINS(sift::testing::error_of([&] { read_hf_model(folder); }),
                  "model_type \"roberta\" is not supported yet: Sift lacks a byte-level BPE "
                  "tokenizer");
  config["model_type"] = "camembert";
  write_file(folder + "/config.json", config.dump());
  EXPECT_CONTAINS(sift::testing::error_of([&] { read_hf_model(folder); }),
                  "model_type \"camembert\" is not supported yet: Sift lacks CamemBERT's own "
                  "fairseq ids");
  config["model_type"] = "gpt2";
  write_file(folder + "/config.json", config.dump());
  EXPECT_CONTAINS(sift::testing::error_of([&] { read_hf_model(folder); }),
                  "unknown model_type \"gpt2\"");
  config["model_type"] = "bert";
  config["num_hidden_layers"] = 3;
  write_file(folder + "/config.json", config.dump());
  EXPECT_CONTAINS(sift::testing::error_of([&] { read_hf_model(folder); }),
                  "no tensor 'bert.encoder.layer.2.attention.self.query.weight'");
  config.erase("hidden_size");
  write_file(folder + "/config.json", config.dump());
  EXPECT_CONTAINS(sift::testing::error_of([&] { read_hf_model(folder); }), "no \"hidden_size\"");
  EXPECT_CONTAINS(sift::testing::error_of([] { read_hf_model("/nonexistent/model"); }),
                  "cannot read /nonexistent/model/config.json");
}

}  // namespace bert_test
}  // namespace sift
