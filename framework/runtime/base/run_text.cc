#include "framework/runtime/base/run_text.h"

#include <fmt/format.h>

#include <filesystem>

#include "config/loader.h"
#include "config/run_paths.h"
#include "core/error.h"
#include "datasets/encoder_config.h"
#include "framework/runtime/base/run_folder.h"

namespace sift {

RunText load_run_text(const std::string& run_dir, const std::vector<std::string>& overrides,
                      const InputKindOf& input_kind) {
  if (!std::filesystem::is_directory(run_dir)) {
    throw Error(fmt::format("{} is not a run folder (no such directory)", run_dir));
  }
  RunText t;
  const std::string config_path = run_file(run_dir, kConfigFile);
  // An empty config.yaml loads as the defaults, and was blamed on best.ckpt's model type.
  if (std::filesystem::exists(config_path) && std::filesystem::file_size(config_path) == 0) {
    throw Error(fmt::format("{} is empty", config_path));
  }
  t.config = load_config(config_path, overrides);
  resolve_paths_against(t.config, run_dir);
  // A pretraining run (pretrain.files) has no labels: its labels.txt is empty.
  if (t.config.pretrain.files.empty()) t.labels = LabelSet::load(run_file(run_dir, kLabelsFile));
  t.vocab = std::make_shared<Vocab>(Vocab::load(run_file(run_dir, kVocabFile)));
  SiftConfig encoder_config = t.config;
  // The run keeps the stop words it was trained with: the original file may be gone.
  if (!encoder_config.tokenizer.stopwords.empty()) {
    encoder_config.tokenizer.stopwords = run_file(run_dir, kStopwordsFile);
  }
  t.encoder = encoder_options(encoder_config, input_kind(t.config.model.type));
  if (t.config.tokenizer.type == TokenizerType::sentencepiece) {
    t.pieces = SentencePieceModel::open(run_file(run_dir, kTokenizerModelFile));
  }
  if (t.config.tokenizer.type == TokenizerType::wordpiece) {
    t.wordpiece =
        open_wordpiece(run_file(run_dir, kTokenizerModelFile), t.encoder.tokenizer.lowercase);
  }
  return t;
}

}  // namespace sift
