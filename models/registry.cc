#include <fmt/format.h>

#include "framework/error.h"
#include "models/fasttext.h"
#include "models/model.h"

namespace sift {

const std::vector<ModelSpec>& model_registry() {
  static const std::vector<ModelSpec> registry = {
      {"fasttext", "mean of word and hashed n-gram embeddings, then a linear layer",
       InputKind::bag, {"model.dim", "model.ngrams", "model.buckets"},
       [](const ModelConfig& c, const ModelShape& s) { return Classifier(FastText(c, s).ptr()); }},
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

}  // namespace sift
