// Tiny random Hugging Face model folders, written as `save_pretrained` writes a sequence
// classifier's (config.json, model.safetensors in F32, vocab.txt): BERT, DistilBERT and
// ELECTRA with narrower embeddings; ALBERT (narrower embeddings, 2 layer groups applied 4
// times, spiece.model) and XLM-R (positions from 2, sentencepiece.bpe.model), their
// SentencePiece models trained here through the plug-in. Torch-free, for the model tests
// and the CLI tests.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "datasets/safetensors.h"
#include "datasets/sentencepiece.h"
#include "tests/test_files.h"

namespace sift::testing {

constexpr int64_t kVocab = 50, kHidden = 32, kLayers = 2, kHeads = 4, kInter = 64, kPositions = 40,
                  kClasses = 3, kEmbed = 16;

class HfCheckpoint {
 public:
  explicit HfCheckpoint(uint32_t seed) : rng_(seed) {}
  void add(const std::string& name, std::vector<int64_t> shape, float mean = 0.0f) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::normal_distribution<float> normal(mean, 0.2f);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = normal(rng_);
    tensors_.push_back(
        {name, SafeDtype::f32, std::move(shape), safe_tensor_bytes(v, SafeDtype::f32)});
  }
  void linear(const std::string& name, int64_t out, int64_t in) {
    add(name + ".weight", {out, in});
    add(name + ".bias", {out});
  }
  void norm(const std::string& name, int64_t dim) {
    add(name + ".weight", {dim}, 1.0f);
    add(name + ".bias", {dim});
  }
  void write(const std::string& path) const { write_safetensors(path, tensors_); }

 private:
  std::mt19937 rng_;
  std::vector<SafeTensorData> tensors_;
};

// Whether this build can train and read SentencePiece models (the plug-in); the reason
// to skip a test when it cannot.
inline std::string no_sentencepiece() {
  if (!sentencepiece_supported()) return "sanitizer build: no SentencePiece plug-in";
  try {
    sentencepiece_plugin_path();
  } catch (const std::exception& e) {
    return std::string("no SentencePiece plug-in: ") + e.what();
  }
  return "";
}

// English-like lines with numbers before commas ("in 1999, ..."), accents, capitals and
// runs of spaces: what ALBERT's text normalisation and its comma rule act on.
inline std::string piece_corpus() {
  const std::vector<std::string> words{
      "the",   "film",  "was",   "great", "good", "bad",   "awful", "boring", "plot",
      "story", "love",  "hate",  "movie", "café", "naïve", "Paris", "in",     "and",
      "of",    "1999,", "2,000", "it",    "is",   "fun",   "dull",  "ACTORS", "music"};
  std::mt19937 rng(7);
  std::string text;
  for (int line = 0; line < 400; ++line) {
    const int n = 4 + static_cast<int>(rng() % 9);
    for (int w = 0; w < n; ++w) text += (w ? " " : "") + words[rng() % words.size()];
    text += "\n";
  }
  return text;
}

// Trains `dir`/`name` (ALBERT's: <pad> 0, <unk> 1, [CLS] 2, [SEP] 3, [MASK] 4; else
// SentencePiece's defaults, XLM-R's: <unk> 0, <s> 1, </s> 2) and returns its piece count.
inline int64_t train_pieces(const std::string& dir, const std::string& name, bool albert) {
  write_file(dir + "/corpus.txt", piece_corpus());
  const std::string prefix = dir + "/pieces";
  std::vector<std::pair<std::string, std::string>> flags{{"hard_vocab_limit", "false"}};
  if (albert) {
    flags.insert(flags.end(), {{"pad_id", "0"},
                               {"unk_id", "1"},
                               {"bos_id", "-1"},
                               {"eos_id", "-1"},
                               {"control_symbols", "[CLS],[SEP],[MASK]"}});
  }
  train_sentencepiece(dir + "/corpus.txt", prefix, 90, "unigram", flags);
  std::filesystem::rename(prefix + ".model", dir + "/" + name);
  return SentencePieceModel::open(dir + "/" + name)->size();
}

inline void bert_layers(HfCheckpoint& c, const std::string& base) {
  for (int64_t i = 0; i < kLayers; ++i) {
    const std::string p = base + "encoder.layer." + std::to_string(i) + ".";
    for (const char* part : {"query", "key", "value"}) {
      c.linear(p + "attention.self." + part, kHidden, kHidden);
    }
    c.linear(p + "attention.output.dense", kHidden, kHidden);
    c.norm(p + "attention.output.LayerNorm", kHidden);
    c.linear(p + "intermediate.dense", kInter, kHidden);
    c.linear(p + "output.dense", kHidden, kInter);
    c.norm(p + "output.LayerNorm", kHidden);
  }
}

// A model folder of `type` as `save_pretrained` writes a sequence classifier's.
inline std::string hf_folder(const std::string& type) {
  const std::string dir = make_temp_dir("sift_hf_" + type);
  HfCheckpoint c(type.size() * 7 + 1);
  nlohmann::json config{{"model_type", type},
                        {"vocab_size", kVocab},
                        {"max_position_embeddings", kPositions},
                        {"id2label", {{"0", "neg"}, {"1", "neu"}, {"2", "pos"}}}};
  const std::string base = type + ".", e = base + "embeddings.";
  if (type == "distilbert") {
    config.update({{"dim", kHidden},
                   {"n_layers", kLayers},
                   {"n_heads", kHeads},
                   {"hidden_dim", kInter},
                   {"activation", "gelu"}});
    c.add(e + "word_embeddings.weight", {kVocab, kHidden});
    c.add(e + "position_embeddings.weight", {kPositions, kHidden});
    c.norm(e + "LayerNorm", kHidden);
    for (int64_t i = 0; i < kLayers; ++i) {
      const std::string p = base + "transformer.layer." + std::to_string(i) + ".";
      for (const char* part : {"q_lin", "k_lin", "v_lin", "out_lin"}) {
        c.linear(p + "attention." + part, kHidden, kHidden);
      }
      c.norm(p + "sa_layer_norm", kHidden);
      c.linear(p + "ffn.lin1", kInter, kHidden);
      c.linear(p + "ffn.lin2", kHidden, kInter);
      c.norm(p + "output_layer_norm", kHidden);
    }
    c.linear("pre_classifier", kHidden, kHidden);
    c.linear("classifier", kClasses, kHidden);
  } else {
    const bool electra = type == "electra";
    const int64_t width = electra ? kEmbed : kHidden;
    config.update({{"hidden_size", kHidden},
                   {"num_hidden_layers", kLayers},
                   {"num_attention_heads", kHeads},
                   {"intermediate_size", kInter},
                   {"type_vocab_size", 2},
                   {"layer_norm_eps", 1e-12},
                   {"hidden_act", "gelu"}});
    if (electra) config["embedding_size"] = kEmbed;
    c.add(e + "word_embeddings.weight", {kVocab, width});
    c.add(e + "position_embeddings.weight", {kPositions, width});
    c.add(e + "token_type_embeddings.weight", {2, width});
    c.norm(e + "LayerNorm", width);
    if (electra) c.linear(base + "embeddings_project", kHidden, kEmbed);
    bert_layers(c, base);
    if (electra) {
      c.linear("classifier.dense", kHidden, kHidden);
      c.linear("classifier.out_proj", kClasses, kHidden);
    } else {
      c.linear(base + "pooler.dense", kHidden, kHidden);
      c.linear("classifier", kClasses, kHidden);
    }
  }
  c.write(dir + "/model.safetensors");
  write_file(dir + "/config.json", config.dump(2));
  std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
  for (int64_t i = 5; i < kVocab; ++i) vocab += "w" + std::to_string(i) + "\n";
  write_file(dir + "/vocab.txt", vocab);
  return dir;
}

// ALBERT's sequence classifier: embeddings of width kEmbed, a Linear to kHidden, 2 layer
// groups applied 4 times (0, 0, 1, 1), the tanh pooler; gelu_new.
inline std::string albert_folder() {
  const std::string dir = make_temp_dir("sift_hf_albert");
  const int64_t vocab = train_pieces(dir, "spiece.model", true);
  HfCheckpoint c(11);
  const std::string e = "albert.embeddings.";
  c.add(e + "word_embeddings.weight", {vocab, kEmbed});
  c.add(e + "position_embeddings.weight", {kPositions, kEmbed});
  c.add(e + "token_type_embeddings.weight", {2, kEmbed});
  c.norm(e + "LayerNorm", kEmbed);
  c.linear("albert.encoder.embedding_hidden_mapping_in", kHidden, kEmbed);
  for (int g = 0; g < 2; ++g) {
    const std::string p =
        "albert.encoder.albert_layer_groups." + std::to_string(g) + ".albert_layers.0.";
    for (const char* part : {"query", "key", "value", "dense"}) {
      c.linear(p + "attention." + part, kHidden, kHidden);
    }
    c.norm(p + "attention.LayerNorm", kHidden);
    c.linear(p + "ffn", kInter, kHidden);
    c.linear(p + "ffn_output", kHidden, kInter);
    c.norm(p + "full_layer_layer_norm", kHidden);
  }
  c.linear("albert.pooler", kHidden, kHidden);
  c.linear("classifier", kClasses, kHidden);
  c.write(dir + "/model.safetensors");
  const nlohmann::json config{
      {"model_type", "albert"},      {"vocab_size", vocab},
      {"embedding_size", kEmbed},    {"hidden_size", kHidden},
      {"num_hidden_layers", 4},      {"num_hidden_groups", 2},
      {"inner_group_num", 1},        {"num_attention_heads", kHeads},
      {"intermediate_size", kInter}, {"max_position_embeddings", kPositions},
      {"type_vocab_size", 2},        {"layer_norm_eps", 1e-12},
      {"hidden_act", "gelu_new"},    {"id2label", {{"0", "neg"}, {"1", "neu"}, {"2", "pos"}}}};
  write_file(dir + "/config.json", config.dump(2));
  write_file(dir + "/tokenizer_config.json",
             R"({"do_lower_case": true, "keep_accents": false, "remove_space": true})");
  return dir;
}

// XLM-R's sequence classifier: RoBERTa's embeddings (positions from pad_token_id + 1 = 2,
// one token type), BERT's layers, the classifier.dense / out_proj head; LayerNorm 1e-5.
inline std::string xlmr_folder() {
  const std::string dir = make_temp_dir("sift_hf_xlmr");
  const int64_t vocab = train_pieces(dir, "sentencepiece.bpe.model", false) + 2;
  HfCheckpoint c(13);
  const std::string e = "roberta.embeddings.";
  c.add(e + "word_embeddings.weight", {vocab, kHidden});
  c.add(e + "position_embeddings.weight", {kPositions + 2, kHidden});
  c.add(e + "token_type_embeddings.weight", {1, kHidden});
  c.norm(e + "LayerNorm", kHidden);
  bert_layers(c, "roberta.");
  c.linear("classifier.dense", kHidden, kHidden);
  c.linear("classifier.out_proj", kClasses, kHidden);
  c.write(dir + "/model.safetensors");
  const nlohmann::json config{{"model_type", "xlm-roberta"},
                              {"vocab_size", vocab},
                              {"hidden_size", kHidden},
                              {"num_hidden_layers", kLayers},
                              {"num_attention_heads", kHeads},
                              {"intermediate_size", kInter},
                              {"max_position_embeddings", kPositions + 2},
                              {"type_vocab_size", 1},
                              {"pad_token_id", 1},
                              {"layer_norm_eps", 1e-5},
                              {"hidden_act", "gelu"},
                              {"id2label", {{"0", "neg"}, {"1", "neu"}, {"2", "pos"}}}};
  write_file(dir + "/config.json", config.dump(2));
  return dir;
}

}  // namespace sift::testing
