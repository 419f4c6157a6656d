#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "config/loader.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "datasets/masked_lm.h"
#include "datasets/sentencepiece.h"
#include "datasets/wordpiece_trainer.h"
#include "framework/runtime/base/init_from_config.h"
#include "framework/runtime/base/task.h"
#include "models/base/traits.h"
#include "tools/sift/commands.h"

namespace sift::cli {
namespace {

// tokenizer.type wordpiece: a vocab.txt from a uniform sample of the training texts (with
// pretrain.files: of the unlabelled ones), for an encoder pretrained from scratch.
void train_wordpiece(const SiftConfig& config) {
  const auto& t = config.tokenizer;
  if (t.model.empty()) {
    throw Error(
        "tokenizer.model: The path to write the WordPiece vocabulary (vocab.txt) to must be "
        "given.");
  }
  const std::string sample = t.model + ".sample.txt";
  const uint64_t lines =
      sample_training_text(resolve_data(config), static_cast<uint64_t>(t.sample_lines), sample);
  std::vector<std::string> texts;
  {
    std::ifstream in(sample);
    for (std::string line; std::getline(in, line);) texts.push_back(line);
  }
  std::filesystem::remove(sample);
  WordPieceOptions options;
  options.lowercase = t.lowercase;
  const auto tokens = train_wordpiece_vocab(texts, static_cast<size_t>(t.vocab_size), options);
  write_file_atomically(t.model, fmt::format("{}\n", fmt::join(tokens, "\n")));
  std::cout << fmt::format("wrote {} ({} WordPiece tokens, from {} sampled lines)\n", t.model,
                           tokens.size(), lines);
}

void train_tokenizer(const std::string& config_path, const std::vector<std::string>& overrides) {
  const SiftConfig config = load_config(config_path, overrides);
  const auto& t = config.tokenizer;
  if (t.type == TokenizerType::wordpiece) {
    train_wordpiece(config);
    return;
  }
  if (t.model.empty()) {
    throw Error("tokenizer.model: The path to write the SentencePiece model to must be given.");
  }
  const std::string suffix = ".model";
  if (t.model.size() <= suffix.size() ||
      t.model.compare(t.model.size() - suffix.size(), suffix.size(), suffix) != 0) {
    throw Error(fmt::format("tokenizer.model: '{}' must end in .model", t.model));
  }
  const std::string prefix = t.model.substr(0, t.model.size() - suffix.size());
  const std::string sample = prefix + ".sample.txt";
  const uint64_t lines =
      sample_training_text(resolve_data(config), static_cast<uint64_t>(t.sample_lines), sample);
  std::cerr << fmt::format("sampled {} lines; training a {} model of {} pieces\n", lines,
                           t.model_type, t.vocab_size);
  // For masked-token pretraining (pretrain.files) the model holds a [MASK] piece: a control
  // symbol, which no text encodes to.
  std::vector<std::pair<std::string, std::string>> flags;
  if (!config.pretrain.files.empty()) flags.emplace_back("control_symbols", kMaskPiece);
  try {
    train_sentencepiece(sample, prefix, t.vocab_size, t.model_type, flags);
  } catch (...) {
    std::filesystem::remove(sample);
    throw;
  }
  std::filesystem::remove(sample);
  std::cout << fmt::format("wrote {} ({} pieces, from {} sampled lines)\n", t.model, t.vocab_size,
                           lines);
}

// Each line of `input` (- for stdin) as `sift train` of `config_path` reads it: one line of
// its input ids (the config's tokenizer and data.max_length; with train.init_from, the
// run's), space-separated. For baselines that must see Sift's ids (bench/finetune_hf.py
// --sst2) and for checking a tokenization by eye.
void encode_texts(const std::string& config_path, const std::vector<std::string>& overrides,
                  const std::string& input) {
  const SiftConfig config = load_training_config(config_path, overrides, model_traits());
  const Task task = build_task(resolve_data(config));
  TextEncoder encoder = make_encoder(task);
  std::ifstream file;
  if (input != "-") {
    file.open(input);
    if (!file) throw Error(fmt::format("--input: cannot read '{}'", input));
  }
  std::istream& in = input == "-" ? std::cin : file;
  std::vector<int64_t> ids;
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    ids.clear();
    encoder.encode(line, ids);
    out.clear();
    fmt::format_to(std::back_inserter(out), "{}\n", fmt::join(ids, " "));
    std::cout << out;
  }
}

}  // namespace

void add_tokenizer_command(CLI::App& app) {
  struct Args {
    std::string config;
    std::vector<std::string> overrides;
    std::string input = "-";
  };
  auto args = std::make_shared<Args>();
  auto* cmd =
      app.add_subcommand("tokenizer", "Train a tokenizer for a config, or encode texts with it.");
  cmd->require_subcommand(1);
  auto* train = cmd->add_subcommand(
      "train",
      "Train a SentencePiece model (tokenizer.model) on a uniform sample of the training data, "
      "or with tokenizer.type wordpiece a WordPiece vocabulary (vocab.txt).");
  // Both read a config with --set overrides.
  const auto add_config = [&args](CLI::App* sub) {
    sub->add_option("config", args->config, "YAML config file")->required();
    sub->add_option("--set", args->overrides, "Override a config key")->type_name("KEY=VALUE");
  };
  add_config(train);
  train->callback([args] { train_tokenizer(args->config, args->overrides); });
  auto* encode = cmd->add_subcommand(
      "encode",
      "Print the input ids `sift train` of the config reads for each line of --input, one "
      "line each (its tokenizer and data.max_length; with train.init_from, the run's).");
  add_config(encode);
  encode->add_option("--input", args->input, "Text file, one text per line; - for stdin")
      ->capture_default_str();
  encode->callback([args] { encode_texts(args->config, args->overrides, args->input); });
}

}  // namespace sift::cli
