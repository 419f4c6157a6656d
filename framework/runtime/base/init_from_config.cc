#include "framework/runtime/base/init_from_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "config/loader.h"
#include "config/options.h"
#include "core/error.h"
#include "framework/runtime/base/run_folder.h"

namespace sift {
namespace {

bool starts_with(const std::string& key, const char* prefix) { return key.rfind(prefix, 0) == 0; }

// The keys a continuing config takes from the run when it does not give them: the model
// keys the run's model reads (`reads`: its traits' options; none of another model's, which
// the checks would refuse as set).
bool taken_from_run(const std::string& key, const std::vector<std::string>& reads) {
  if (starts_with(key, "model.")) {
    return key == "model.type" ||
           (key != "model.pretrained" && std::find(reads.begin(), reads.end(), key) != reads.end());
  }
  return starts_with(key, "tokenizer.") || key == "data.max_length";
}

// Model keys that change no weight's shape or meaning: a fine-tuning may set its own.
bool fine_tuning_choice(const std::string& key) {
  return key == "model.dropout" || key == "model.freeze_embeddings" || key == "model.pooling";
}

void check_same(const Option& option, const SiftConfig& config, const SiftConfig& run,
                const std::string& from) {
  const std::string mine = emitted(option, config), theirs = emitted(option, run);
  if (mine == theirs) return;
  throw Error(fmt::format(
      "{}: {} gives {}, but the {} model in {} (train.init_from) has {}: its weights are "
      "that model's; leave {} out to take the run's",
      option.name, config.origin.at(option.name), mine, run.model.type, from, theirs, option.name));
}

}  // namespace

void take_run_model(SiftConfig& config, const std::string& from,
                    const std::vector<ModelTraits>& models) {
  const std::string path = run_file(from, kConfigFile);
  if (from.empty() || !std::filesystem::exists(path)) return;
  const SiftConfig run = load_config(path);
  if (is_set(config, "model.type") && config.model.type != run.model.type) return;
  const std::string origin = fmt::format("train.init_from ({})", from);
  std::vector<std::string> reads;
  for (const ModelTraits& m : models) {
    if (m.name == run.model.type) reads = m.options;
  }
  for (const Option& option : all_options()) {
    const std::string& key = option.name;
    if (!taken_from_run(key, reads)) continue;
    if (is_set(config, key)) {
      if (starts_with(key, "model.") && !fine_tuning_choice(key)) {
        check_same(option, config, run, from);
      }
      continue;
    }
    option.parse(config, option.emit(run));
    config.origin[key] = origin;
  }
  // The run's own copies: the paths in its config.yaml may be gone or relative elsewhere.
  const std::string model_file = run_file(from, kTokenizerModelFile);
  if (config.origin.at("tokenizer.model") == origin && std::filesystem::exists(model_file)) {
    config.tokenizer.model = model_file;
  }
  const std::string stopwords = run_file(from, kStopwordsFile);
  if (config.origin.at("tokenizer.stopwords") == origin && !run.tokenizer.stopwords.empty() &&
      std::filesystem::exists(stopwords)) {
    config.tokenizer.stopwords = stopwords;
  }
}

SiftConfig load_training_config(const std::string& path, const std::vector<std::string>& overrides,
                                const std::vector<ModelTraits>& models) {
  SiftConfig config = load_config(path, overrides);
  take_run_model(config, config.train.init_from, models);
  apply_model_defaults(config, models);
  return config;
}

}  // namespace sift
