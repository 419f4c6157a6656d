// The model registry: one register_model line per model type. Everything the framework
// asks of a model (its input, how to build it, how to export it, its fused step and
// pruning units) comes from here, and what the config checks know of it (its keys, what
// it supports) from its traits (models/base/traits.cc); nothing else names a model type.
#include <fmt/format.h>

#include "core/error.h"
#include "models/bert.h"
#include "models/fasttext.h"
#include "models/fasttext_tables.h"
#include "models/mlp.h"
#include "models/model.h"
#include "models/rnn.h"
#include "models/textcnn.h"
#include "models/transformer.h"

namespace sift {
namespace {

// Adds `Module` (a FooImpl + TORCH_MODULE(Foo), built as Foo(config, shape)) under
// `name`, with that name's traits (models/base/traits.cc).
template <typename Module>
void register_model(std::vector<ModelSpec>& registry, const std::string& name, ScriptSource script,
                    PruneUnits prune_units, BagTablesOf bag_tables = nullptr) {
  for (ModelTraits& traits : model_traits()) {
    if (traits.name != name) continue;
    const InputKind input = traits.input;
    registry.push_back({std::move(traits), input, factory_of<Module>(), std::move(script),
                        std::move(bag_tables), std::move(prune_units)});
    return;
  }
  throw Error(fmt::format("models/base/traits.cc has no model '{}'", name));
}

std::vector<ModelSpec> registered_models() {
  std::vector<ModelSpec> r;
  register_model<FastText>(r, "fasttext", fasttext_script, fasttext_units, bag_tables_of);
  register_model<TextCnn>(r, "textcnn", textcnn_script, textcnn_units);
  register_model<Rnn>(r, "rnn", rnn_script, rnn_units);
  register_model<Transformer>(r, "transformer", transformer_script, transformer_units);
  register_model<Mlp>(r, "mlp", mlp_script, nullptr);
  register_model<Bert>(r, "bert", bert_script, transformer_units);
  r.back().encoder_script = bert_encoder_script;
  return r;
}

}  // namespace

const std::vector<ModelSpec>& model_registry() {
  static const std::vector<ModelSpec> registry = registered_models();
  return registry;
}

const ModelSpec& find_model(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& spec : model_registry()) {
    if (spec.traits.name == name) return spec;
    names.push_back(spec.traits.name);
  }
  throw Error(fmt::format("unknown model type '{}' (known: {})", name, fmt::join(names, ", ")));
}

}  // namespace sift
