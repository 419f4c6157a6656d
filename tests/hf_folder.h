// Tiny random Hugging Face model folders, written as `save_pretrained` writes a sequence
// classifier's (config.json, model.safetensors in F32, vocab.txt): BERT, DistilBERT and
// ELECTRA with narrower embeddings. Torch-free, for the model tests and the CLI tests.
#pragma once

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "datasets/safetensors.h"
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

}  // namespace sift::testing
