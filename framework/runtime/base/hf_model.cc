#include "framework/runtime/base/hf_model.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.h"
#include "datasets/model_pieces.h"
#include "datasets/safetensors.h"

namespace sift {
namespace {

using nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("cannot read {}: the model folder needs it", path));
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw Error(fmt::format("{} is not valid JSON: {}", path, e.what()));
  }
}

template <typename T>
T key_of(const json& config, const std::string& key, const std::string& where,
         std::optional<T> fallback = std::nullopt) {
  const auto it = config.find(key);
  if (it == config.end()) {
    if (fallback) return *fallback;
    throw Error(fmt::format("{}: no \"{}\"", where, key));
  }
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw Error(fmt::format("{}: \"{}\" has the wrong type ({})", where, key, it->dump()));
  }
}

// Where each architecture keeps its parts; "{}" is the layer number.
struct Layout {
  std::string word, position, token_type, embedding_norm, project;
  std::string query, key, value, attention_out, attention_norm, ff_in, ff_out, ff_norm;
  std::string head, output;
};

Layout bert_layout(const std::string& base, const std::string& head, const std::string& output) {
  const std::string e = base + "embeddings.", l = base + "encoder.layer.{}.";
  return {e + "word_embeddings",
          e + "position_embeddings",
          e + "token_type_embeddings",
          e + "LayerNorm",
          base + "embeddings_project",
          l + "attention.self.query",
          l + "attention.self.key",
          l + "attention.self.value",
          l + "attention.output.dense",
          l + "attention.output.LayerNorm",
          l + "intermediate.dense",
          l + "output.dense",
          l + "output.LayerNorm",
          head,
          output};
}

Layout distilbert_layout(const std::string& base) {
  const std::string e = base + "embeddings.", l = base + "transformer.layer.{}.";
  return {e + "word_embeddings",
          e + "position_embeddings",
          "",
          e + "LayerNorm",
          "",
          l + "attention.q_lin",
          l + "attention.k_lin",
          l + "attention.v_lin",
          l + "attention.out_lin",
          l + "sa_layer_norm",
          l + "ffn.lin1",
          l + "ffn.lin2",
          l + "output_layer_norm",
          "pre_classifier",
          "classifier"};
}

// ALBERT's: layer group g's one layer is "{}" (inner_group_num 1).
Layout albert_layout(const std::string& base) {
  const std::string e = base + "embeddings.",
                    l = base + "encoder.albert_layer_groups.{}.albert_layers.0.";
  return {e + "word_embeddings",
          e + "position_embeddings",
          e + "token_type_embeddings",
          e + "LayerNorm",
          base + "encoder.embedding_hidden_mapping_in",
          l + "attention.query",
          l + "attention.key",
          l + "attention.value",
          l + "attention.dense",
          l + "attention.LayerNorm",
          l + "ffn",
          l + "ffn_output",
          l + "full_layer_layer_norm",
          base + "pooler",
          "classifier"};
}

// ALBERT's layer groups: num_hidden_groups layers, each applied num_hidden_layers /
// num_hidden_groups times in a row.
void read_albert_layers(const json& c, const std::string& where, ModelConfig& o) {
  const int64_t depth = key_of<int64_t>(c, "num_hidden_layers", where);
  o.layers = key_of<int64_t>(c, "num_hidden_groups", where, int64_t{1});
  if (o.layers < 1 || depth % o.layers != 0) {
    throw Error(fmt::format("{}: num_hidden_groups {} does not divide num_hidden_layers {}", where,
                            o.layers, depth));
  }
  o.layer_repeats = depth / o.layers;
  const int64_t inner = key_of<int64_t>(c, "inner_group_num", where, int64_t{1});
  if (inner != 1) {
    throw Error(fmt::format(
        "{}: inner_group_num {} is not supported (Sift reads ALBERT's one layer a group)", where,
        inner));
  }
}

// The feed-forward activation of config.json's hidden_act (DistilBERT: activation).
std::string ff_activation(const json& c, const std::string& key, const std::string& where) {
  const std::string act = key_of<std::string>(c, key, where, std::string("gelu"));
  if (act == "gelu") return "gelu";
  if (act == "gelu_new" || act == "gelu_pytorch_tanh") return "gelu_tanh";
  throw Error(fmt::format(
      "{}: {} \"{}\" is not supported (the encoder runs exact GELU, or its tanh approximation "
      "as gelu_new)",
      where, key, act));
}

// The sizes of config.json as the encoder's options.
void read_sizes(const json& c, const std::string& type, const std::string& where, HfModel& m) {
  ModelConfig& o = m.model;
  o.type = "bert";
  o.pooling = "cls";
  o.dropout = 0.1;
  const bool distil = type == "distilbert";
  o.dim = key_of<int64_t>(c, distil ? "dim" : "hidden_size", where);
  if (type == "albert") {
    read_albert_layers(c, where, o);
  } else {
    o.layers = key_of<int64_t>(c, distil ? "n_layers" : "num_hidden_layers", where);
  }
  o.heads = key_of<int64_t>(c, distil ? "n_heads" : "num_attention_heads", where);
  o.ff_dim = key_of<int64_t>(c, distil ? "hidden_dim" : "intermediate_size", where);
  o.max_positions = key_of<int64_t>(c, "max_position_embeddings", where);
  m.vocab_size = key_of<int64_t>(c, "vocab_size", where);
  o.token_types = distil ? 0 : key_of<int64_t>(c, "type_vocab_size", where, int64_t{2});
  o.layer_norm_eps = distil ? 1e-12 : key_of<double>(c, "layer_norm_eps", where, 1e-12);
  o.head_activation = type == "distilbert" ? "relu" : type == "electra" ? "gelu" : "tanh";
  if (type == "electra" || type == "albert") {
    const int64_t e = key_of<int64_t>(c, "embedding_size", where, type == "albert" ? 128 : o.dim);
    o.embedding_dim = e == o.dim ? 0 : e;
  }
  // RoBERTa's positions count from padding_idx + 1 (fairseq's make_positions).
  if (type == "xlm-roberta") o.position_offset = key_of<int64_t>(c, "pad_token_id", where, 1) + 1;
  o.ff_activation = ff_activation(c, distil ? "activation" : "hidden_act", where);
  const std::string positions =
      key_of<std::string>(c, "position_embedding_type", where, std::string("absolute"));
  if (positions != "absolute") {
    throw Error(fmt::format("{}: position_embedding_type \"{}\" is not supported (only absolute)",
                            where, positions));
  }
}

std::vector<std::string> labels_of(const json& c, int64_t rows) {
  std::vector<std::string> labels(static_cast<size_t>(rows));
  const auto it = c.find("id2label");
  for (int64_t i = 0; i < rows; ++i) {
    const std::string id = std::to_string(i);
    labels[static_cast<size_t>(i)] = it != c.end() && it->contains(id)
                                         ? (*it)[id].get<std::string>()
                                         : fmt::format("LABEL_{}", i);
  }
  return labels;
}

class Reader {
 public:
  Reader(const SafetensorsFile& file, HfModel& model) : file_(file), model_(model) {}

  bool has(const std::string& hf) const { return file_.find(hf) != nullptr; }

  // <hf>.weight and .bias (LayerNorms of older files: .gamma and .beta) as <name>.*;
  // several hf names are stacked along their first dimension (query, key, value).
  void add(const std::string& name, const std::vector<std::string>& hf, bool bias = true) {
    add_one(name + ".weight", hf, {".weight", ".gamma"});
    if (bias) add_one(name + ".bias", hf, {".bias", ".beta"});
  }

 private:
  const SafeTensorInfo& find(const std::string& hf, const std::vector<std::string>& suffixes) {
    for (const std::string& s : suffixes) {
      if (const SafeTensorInfo* t = file_.find(hf + s)) return *t;
    }
    throw Error(fmt::format("{}: no tensor '{}{}'", file_.path(), hf, suffixes[0]));
  }

  void add_one(const std::string& name, const std::vector<std::string>& hf,
               const std::vector<std::string>& suffixes) {
    NamedTensor t{name, {}, {}};
    for (const std::string& h : hf) {
      const SafeTensorInfo& info = find(h, suffixes);
      const std::vector<float> v = file_.floats(info);
      if (t.shape.empty()) {
        t.shape = info.shape;
      } else {
        t.shape[0] += info.shape.at(0);
      }
      t.values.insert(t.values.end(), v.begin(), v.end());
    }
    model_.tensors.push_back(std::move(t));
  }

  const SafetensorsFile& file_;
  HfModel& model_;
};

void read_tensors(const SafetensorsFile& file, const Layout& l, HfModel& m) {
  Reader r(file, m);
  r.add("embedding", {l.word}, false);
  r.add("positions", {l.position}, false);
  if (m.model.token_types > 0) r.add("token_types", {l.token_type}, false);
  r.add("embedding_norm", {l.embedding_norm});
  if (m.model.embedding_dim > 0) r.add("embedding_project", {l.project});
  for (int64_t i = 0; i < m.model.layers; ++i) {
    const auto at = [i](const std::string& pattern) { return fmt::format(pattern, i); };
    const std::string p = fmt::format("layers.{}.", i);
    r.add(p + "attention.in_proj", {at(l.query), at(l.key), at(l.value)});
    r.add(p + "attention.out_proj", {at(l.attention_out)});
    r.add(p + "attention_norm", {at(l.attention_norm)});
    r.add(p + "ff_in", {at(l.ff_in)});
    r.add(p + "ff_out", {at(l.ff_out)});
    r.add(p + "ff_norm", {at(l.ff_norm)});
  }
  if (r.has(l.head + ".weight")) {
    r.add("head", {l.head});
  } else {
    add_new_linear(m, "head", m.model.dim, m.model.dim);
  }
  if (r.has(l.output + ".weight")) r.add("output", {l.output});
}

// The prefix of a task model's parts (XLMRobertaForSequenceClassification: "roberta").
std::string prefix_of(const std::string& type) { return type == "xlm-roberta" ? "roberta" : type; }

Layout layout_of(const std::string& type, const SafetensorsFile& file) {
  // Base models (BertModel) keep no prefix; task models prefix it with the model type.
  const std::string p = prefix_of(type) + ".";
  const std::string base = file.find(p + "embeddings.word_embeddings.weight") ? p : "";
  if (type == "bert") return bert_layout(base, base + "pooler.dense", "classifier");
  if (type == "electra" || type == "xlm-roberta") {
    return bert_layout(base, "classifier.dense", "classifier.out_proj");
  }
  if (type == "albert") return albert_layout(base);
  return distilbert_layout(base);
}

// What Sift lacks for the BERT-like types it does not read: one line each.
std::string missing_for(const std::string& type) {
  if (type == "roberta") return "a byte-level BPE tokenizer (vocab.json, merges.txt)";
  if (type == "camembert") {
    return "CamemBERT's own fairseq ids (its SentencePiece pieces offset by four, with "
           "<s>NOTUSED and </s>NOTUSED first)";
  }
  return "";
}

constexpr const char* kKnownTypes = "bert, distilbert, electra, albert, xlm-roberta";

void check_type(const std::string& type, const std::string& where) {
  if (type == "bert" || type == "distilbert" || type == "electra" || type == "albert" ||
      type == "xlm-roberta") {
    return;
  }
  const std::string missing = missing_for(type);
  if (!missing.empty()) {
    throw Error(fmt::format(
        "{}: model_type \"{}\" is not supported yet: Sift lacks {}; `sift import hf` reads "
        "BERT, DistilBERT and ELECTRA (WordPiece), ALBERT and XLM-R (SentencePiece) models",
        where, type, missing));
  }
  throw Error(fmt::format("{}: unknown model_type \"{}\" (known: {})", where, type, kKnownTypes));
}

// The folder's file `name`, which must exist (`what` says what it is).
std::string needed_file(const std::string& dir, const std::string& name, const std::string& what) {
  const std::string path = (std::filesystem::path(dir) / name).string();
  if (!std::filesystem::exists(path)) throw Error(fmt::format("{}: no {} ({})", dir, name, what));
  return path;
}

// The SentencePiece model's ids must be the embedding table's rows.
void check_piece_count(const HfModel& m) {
  const ModelPieces pieces(SentencePieceModel::open(m.tokenizer_path), m.piece_ids, m.lowercase);
  if (pieces.num_ids() != m.vocab_size) {
    throw Error(fmt::format("{} gives {} ids ({}), config.json's vocab_size is {}",
                            m.tokenizer_path, pieces.num_ids(), to_string(m.piece_ids),
                            m.vocab_size));
  }
}

// The tokenizer's files: vocab.txt (WordPiece), spiece.model (ALBERT) or
// sentencepiece.bpe.model (XLM-R), and tokenizer_config.json's case and accents.
void read_tokenizer(const std::string& dir, HfModel& m) {
  const std::string config = (std::filesystem::path(dir) / "tokenizer_config.json").string();
  const json options = std::filesystem::exists(config) ? read_json(config) : json::object();
  if (m.model_type == "albert" || m.model_type == "xlm-roberta") {
    const bool albert = m.model_type == "albert";
    m.tokenizer = TokenizerType::sentencepiece;
    m.piece_ids = albert ? PieceIds::albert : PieceIds::fairseq;
    m.tokenizer_path = needed_file(dir, albert ? "spiece.model" : "sentencepiece.bpe.model",
                                   "the SentencePiece model");
    m.lowercase = albert && key_of<bool>(options, "do_lower_case", config, true);
    if (albert && key_of<bool>(options, "keep_accents", config, false)) {
      throw Error(
          fmt::format("{}: keep_accents true is not supported (Sift strips ALBERT's "
                      "accents, as its tokenizer does by default)",
                      config));
    }
    check_piece_count(m);
    return;
  }
  m.tokenizer_path = needed_file(dir, "vocab.txt", "the WordPiece vocabulary");
  m.lowercase = key_of<bool>(options, "do_lower_case", config, true);
}

}  // namespace

void add_new_linear(HfModel& m, const std::string& name, int64_t rows, int64_t cols) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  NamedTensor w{
      name + ".weight", {rows, cols}, std::vector<float>(static_cast<size_t>(rows * cols))};
  for (float& v : w.values) v = normal(rng);
  m.tensors.push_back(std::move(w));
  m.tensors.push_back(
      {name + ".bias", {rows}, std::vector<float>(static_cast<size_t>(rows), 0.0f)});
}

HfModel read_hf_model(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string config_path = (fs::path(dir) / "config.json").string();
  const json config = read_json(config_path);
  HfModel m;
  m.model_type = key_of<std::string>(config, "model_type", config_path);
  check_type(m.model_type, config_path);
  read_sizes(config, m.model_type, config_path, m);
  const SafetensorsFile file(needed_file(dir, "model.safetensors",
                                         "pytorch_model.bin is a pickle, which Sift does not "
                                         "read: convert it with the safetensors package"));
  read_tensors(file, layout_of(m.model_type, file), m);
  if (m.tensors.back().name == "output.weight" || m.tensors.back().name == "output.bias") {
    m.labels = labels_of(config, m.tensors[m.tensors.size() - 2].shape.at(0));
  }
  read_tokenizer(dir, m);
  return m;
}

}  // namespace sift
