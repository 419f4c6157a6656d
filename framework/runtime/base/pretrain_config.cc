#include "framework/runtime/base/pretrain_config.h"

#include <fmt/format.h>

#include <filesystem>

#include "config/loader.h"
#include "core/error.h"
#include "core/file_bytes.h"
#include "datasets/wordpiece.h"
#include "framework/runtime/base/init_from_config.h"
#include "framework/runtime/base/run_folder.h"

namespace sift {
namespace {

const ModelTraits* traits_named(const std::vector<ModelTraits>& models, const std::string& type) {
  for (const auto& m : models) {
    if (m.name == type) return &m;
  }
  return nullptr;
}

// The vocabulary given must be the one the continued encoder was trained with: its
// embedding rows are those ids.
void check_vocabulary(const std::string& given_path, const std::string& run_path,
                      const std::string& run_dir) {
  const WordPieceVocab mine = WordPieceVocab::load(given_path);
  const WordPieceVocab theirs = WordPieceVocab::load(run_path);
  if (mine.size() != theirs.size()) {
    throw Error(fmt::format(
        "tokenizer.model: {} holds {} tokens, but the encoder in {} (train.init_from) was "
        "trained on {}: a vocabulary that does not match its embedding rows; leave "
        "tokenizer.model out to take the run's own",
        given_path, mine.size(), run_dir, theirs.size()));
  }
  for (size_t i = 0; i < mine.size(); ++i) {
    const auto id = static_cast<int32_t>(i);
    if (mine.token(id) == theirs.token(id)) continue;
    throw Error(fmt::format(
        "tokenizer.model: {}:{} is '{}', but the encoder in {} (train.init_from) has '{}' at "
        "that id: a vocabulary that does not match the encoder; leave tokenizer.model out to "
        "take the run's own",
        given_path, i + 1, mine.token(id), run_dir, theirs.token(id)));
  }
}

// Continuing the encoder of run folder `from`: its model and tokenizer, as a fine-tuning
// takes them (take_run_model), and a vocabulary given in its place must be its own.
void continue_run(SiftConfig& config, const std::string& from,
                  const std::vector<ModelTraits>& models) {
  const SiftConfig run = load_config(run_file(from, kConfigFile));
  const ModelTraits* traits = traits_named(models, run.model.type);
  if (!traits || !traits->masked_lm) {
    throw Error(fmt::format(
        "train.init_from: {} holds a '{}' model, not an encoder that masked-token pretraining "
        "continues (model.type bert: a `sift import hf` run or an earlier `sift pretrain`)",
        from, run.model.type));
  }
  take_run_model(config, from, models);
  const std::string vocabulary = run_file(from, kTokenizerModelFile);
  if (config.tokenizer.model == vocabulary) return;
  if (config.tokenizer.type == TokenizerType::sentencepiece) {
    if (read_file_bytes(config.tokenizer.model) != read_file_bytes(vocabulary)) {
      throw Error(fmt::format(
          "tokenizer.model: {} is not the SentencePiece model the encoder in {} "
          "(train.init_from) was trained on; leave tokenizer.model out to take the run's own",
          config.tokenizer.model, from));
    }
    return;
  }
  check_vocabulary(config.tokenizer.model, vocabulary, from);
}

}  // namespace

SiftConfig pretraining_config(SiftConfig config, const std::vector<ModelTraits>& models) {
  if (config.pretrain.files.empty()) {
    throw Error(
        "pretrain.files: no unlabelled text files are given; list them (one text a line, "
        "plain, .gz or .zst; patterns, folders and @lists as data.train.path)");
  }
  const std::string& from = config.train.init_from;
  if (!from.empty() && std::filesystem::is_directory(from)) continue_run(config, from, models);
  if (!is_set(config, "train.best_metric")) {
    config.train.best_metric = BestMetric::masked_accuracy;
  }
  return config;
}

}  // namespace sift
