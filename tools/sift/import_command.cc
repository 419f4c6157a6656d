// `sift import fasttext|hf MODEL --out RUN`: another tool's model as a Sift run folder
// (fastText's in import_fasttext.cc; a quantized .ftz becomes a pq export file), or a
// Hugging Face BERT-like folder (hf_model.h: BERT, DistilBERT, ELECTRA, ALBERT, XLM-R).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "config/loader.h"
#include "core/error.h"
#include "framework/runtime/base/hf_model.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/runtime/checkpoint.h"
#include "framework/train/base/training_state.h"
#include "tools/sift/commands.h"
#include "tools/sift/import_fasttext.h"
#include "tools/sift/imported_run.h"

namespace sift::cli {
namespace {

struct ImportArgs {
  std::string format;
  std::string model;
  std::string out;
  bool force = false;
  std::vector<std::string> labels;         // hf: a new head's labels, for a folder without one
  std::string label_prefix = "__label__";  // fasttext: its -label
};

// The labels of a Hugging Face folder's head, or a new head's from --labels.
std::vector<std::string> hf_labels(const ImportArgs& a, HfModel& m) {
  if (a.labels.empty()) {
    if (m.labels.empty()) {
      throw Error(fmt::format(
          "{} has no classification head (a base model): give --labels A,B,... to start a new "
          "head, then fine-tune the run (train.init_from)",
          a.model));
    }
    return m.labels;
  }
  const int64_t rows = static_cast<int64_t>(a.labels.size());
  if (!m.labels.empty() && rows != static_cast<int64_t>(m.labels.size())) {
    throw Error(
        fmt::format("--labels: {} labels, the folder's head has {}", rows, m.labels.size()));
  }
  if (m.labels.empty()) add_new_linear(m, "output", rows, m.model.dim);
  return a.labels;
}

SiftConfig hf_config(const ImportArgs& a, const HfModel& m, const std::string& vocab) {
  namespace fs = std::filesystem;
  const ModelConfig& o = m.model;
  return load_config(
      "", {"model.type=bert", fmt::format("model.dim={}", o.dim),
           fmt::format("model.layers={}", o.layers), fmt::format("model.heads={}", o.heads),
           fmt::format("model.ff_dim={}", o.ff_dim),
           fmt::format("model.max_positions={}", o.max_positions),
           fmt::format("model.token_types={}", o.token_types),
           fmt::format("model.embedding_dim={}", o.embedding_dim),
           fmt::format("model.layer_norm_eps={}", o.layer_norm_eps),
           "model.head_activation=" + o.head_activation, "model.ff_activation=" + o.ff_activation,
           fmt::format("model.layer_repeats={}", o.layer_repeats),
           fmt::format("model.position_offset={}", o.position_offset), "model.pooling=cls",
           fmt::format("model.dropout={}", o.dropout), "tokenizer.type=" + to_string(m.tokenizer),
           "tokenizer.piece_ids=" + to_string(m.piece_ids), "tokenizer.model=" + yaml_quoted(vocab),
           fmt::format("tokenizer.lowercase={}", m.lowercase),
           fmt::format("data.max_length={}", o.max_positions - o.position_offset),
           // Hugging Face keeps no training data path; this names where the weights came from.
           "data.train.path=" + yaml_quoted_list({"hf-import:" + fs::absolute(a.model).string()}),
           "train.optimizer.type=adamw", "train.optimizer.lr=3e-5"});
}

void run_import_hf(const ImportArgs& a) {
  HfModel m = read_hf_model(a.model);
  const std::vector<std::string> labels = hf_labels(a, m);
  make_run_folder(a.out, a.force);
  const std::string vocab = run_file(a.out, kTokenizerModelFile);
  copy_file_atomically(m.tokenizer_path, vocab);
  const SiftConfig config = hf_config(a, m, std::filesystem::absolute(vocab).string());
  Checkpoint c;
  c.meta = checkpoint_meta("bert", static_cast<int64_t>(labels.size()), 0, 0);
  c.meta["imported_from"] = {{"format", "hf"},
                             {"path", std::filesystem::absolute(a.model).string()},
                             {"model_type", m.model_type}};
  for (const NamedTensor& t : m.tensors) {
    c.tensor_blobs["model"].emplace_back(t.name, torch::tensor(t.values).view(t.shape).clone());
  }
  write_imported_run(a.out, a.model, config, labels, Vocab(), c);
  const int64_t depth = m.model.layers * m.model.layer_repeats;
  std::cout << fmt::format(
      "imported {} ({}): {} layers{}, dim {}, {} heads, {} {}, {} labels -> {}\n", a.model,
      m.model_type, depth,
      m.model.layer_repeats > 1 ? fmt::format(" ({} shared, each applied {} times)", m.model.layers,
                                              m.model.layer_repeats)
                                : "",
      m.model.dim, m.model.heads, m.vocab_size,
      m.tokenizer == TokenizerType::wordpiece ? "WordPiece tokens" : "SentencePiece ids",
      labels.size(), a.out);
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto args = std::make_shared<ImportArgs>();
  auto* cmd = app.add_subcommand(
      "import",
      "Turn another tool's model into a Sift run folder (fastText supervised .bin; a Hugging "
      "Face BERT, DistilBERT, ELECTRA, ALBERT or XLM-R folder), or a quantized fastText model "
      "(.ftz) into a pq export file.");
  cmd->add_option("format", args->format, "The model's format: fasttext or hf")
      ->required()
      ->check(CLI::IsMember({"fasttext", "hf"}));
  cmd->add_option("model", args->model,
                  "The fastText model (.bin from `fasttext supervised`, .ftz from `fasttext "
                  "quantize`), or the Hugging Face model folder (config.json, "
                  "model.safetensors, vocab.txt; ALBERT: spiece.model; XLM-R: "
                  "sentencepiece.bpe.model)")
      ->required();
  cmd->add_option("--labels", args->labels,
                  "hf: labels of a new classification head, for a folder without one")
      ->delimiter(',');
  cmd->add_option("--out", args->out,
                  "Run folder to write; for a .ftz, the export file to write (model.pt)")
      ->required();
  cmd->add_flag("--force", args->force, "Replace the model in an existing run folder");
  cmd->add_option("--label", args->label_prefix,
                  "fasttext: the label prefix the model was trained with (fastText's -label; "
                  "its file does not keep it)")
      ->capture_default_str();
  cmd->callback([args] {
    if (args->format == "hf") {
      run_import_hf(*args);
    } else {
      import_fasttext(args->model, args->out, args->force, args->label_prefix);
    }
  });
}

}  // namespace sift::cli
