#include <fmt/format.h>

#include "core/error.h"
#include "models/fasttext.h"
#include "models/model.h"
#include "models/rnn.h"
#include "models/textcnn.h"
#include "models/transformer.h"

namespace sift {

const std::vector<ModelSpec>& model_registry() {
  static const std::vector<ModelSpec> registry = {
      {"fasttext", "mean of word and hashed n-gram embeddings, then a linear layer",
       InputKind::bag, {"model.dim", "model.ngrams", "model.buckets"},
       [](const ModelConfig& c, const ModelShape& s) { return Classifier(FastText(c, s).ptr()); }},
      {"textcnn", "convolutions of several widths over word embeddings, max over time (Kim 2014)",
       InputKind::sequence,
       {"model.dim", "model.widths", "model.filters", "model.dropout", "model.pretrained",
        "model.freeze_embeddings"},
       [](const ModelConfig& c, const ModelShape& s) { return Classifier(TextCnn(c, s).ptr()); }},
      {"rnn", "LSTM or GRU over packed sequences, then max, mean or attention pooling",
       InputKind::sequence,
       {"model.dim", "model.cell", "model.hidden", "model.layers", "model.bidirectional",
        "model.pooling", "model.dropout", "model.pretrained", "model.freeze_embeddings"},
       [](const ModelConfig& c, const ModelShape& s) { return Classifier(Rnn(c, s).ptr()); }},
      {"transformer", "pre-LayerNorm Transformer encoder, then cls, mean or max pooling",
       InputKind::sequence,
       {"model.dim", "model.layers", "model.heads", "model.ff_dim", "model.positions",
        "model.max_positions", "model.pooling", "model.dropout", "model.pretrained",
        "model.freeze_embeddings"},
       [](const ModelConfig& c, const ModelShape& s) {
         return Classifier(Transformer(c, s).ptr());
       }},
  };
  return registry;
}

const ModelSpec& find_model(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& spec : model_registry()) {
    if (spec.name == name) return spec;
    names.push_back(spec.name);
  }
  throw Error(fmt::format("unknown model type '{}' (known: {})", name, fmt::join(names, ", ")));
}

std::vector<ModelTraits> model_traits() {
  std::vector<ModelTraits> traits;
  for (const auto& spec : model_registry()) {
    ModelTraits t;
    t.name = spec.name;
    t.summary = spec.summary;
    t.options = spec.options;
    t.recomputation = spec.name != "fasttext";  // fastText has no blocks to re-run
    traits.push_back(std::move(t));
  }
  return traits;
}

}  // namespace sift
