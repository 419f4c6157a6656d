#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "config/loader.h"
#include "core/error.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/runtime/export.h"
#include "framework/runtime/export_pq.h"
#include "framework/train/retrain.h"
#include "tools/sift/commands.h"

namespace sift::cli {
namespace {

struct ExportArgs {
  std::string run_dir;
  std::string out;
  ExportOptions options;
  bool retrain = false;           // output layer and kept rows, as fastText
  bool retrain_output = false;    // the output layer only
  std::vector<std::string> data;  // --data: the training files --retrain reads instead
  std::vector<std::string> sets;  // --set KEY=VALUE: the run's config changed for --retrain
};

// An export written into the run folder itself locks it (it writes there) and must not
// replace one of the run's own files: `--out RUN/best.ckpt` destroyed the checkpoint.
std::unique_ptr<RunFolderLock> check_export_target(const ExportArgs& args) {
  namespace fs = std::filesystem;
  const fs::path out = fs::weakly_canonical(args.out);
  if (out.parent_path() != fs::weakly_canonical(args.run_dir)) return nullptr;
  if (is_run_folder_file(out.filename().string())) {
    throw Error(
        fmt::format("--out {}: that is the run's own {}, not an export; write the "
                    "export to another name",
                    args.out, out.filename().string()));
  }
  return std::make_unique<RunFolderLock>(args.run_dir);
}

void check_retrain(const ExportArgs& args) {
  const char* flag = args.retrain_output ? "--retrain-output" : "--retrain";
  if (args.retrain && args.retrain_output) {
    throw Error(
        "--retrain --retrain-output: choose one (the output layer and the kept rows, "
        "or the output layer only)");
  }
  if (args.options.cutoff == 0) {
    throw Error(fmt::format("{}: retrains on the rows --cutoff keeps; give --cutoff K", flag));
  }
}

// An imported run keeps no training data (its data.train.path names the model it came
// from): --retrain needs --data, said before anything is read.
void check_retrain_data(const ExportArgs& args, const SiftConfig& config) {
  if (!args.data.empty()) return;
  for (const auto& path : config.data.train.path) {
    if (path.rfind("fasttext-import:", 0) == 0) {
      throw Error(fmt::format(
          "{} was imported ({}) and holds no training data: give the files to retrain on "
          "with --data PATH",
          args.run_dir, path.substr(std::string("fasttext-import:").size())));
    }
  }
}

// --data and --set: read only by --retrain (the export itself takes the run's config).
std::vector<std::string> retrain_overrides(const ExportArgs& args) {
  const bool retraining = args.retrain || args.retrain_output;
  if (!retraining && (!args.data.empty() || !args.sets.empty())) {
    throw Error(fmt::format("{}: read only by --retrain or --retrain-output",
                            args.data.empty() ? "--set" : "--data"));
  }
  std::vector<std::string> overrides;
  if (!args.data.empty()) overrides.push_back("data.train.path=" + yaml_quoted_list(args.data));
  overrides.insert(overrides.end(), args.sets.begin(), args.sets.end());
  return overrides;
}

// --retrain: the rows --cutoff keeps are chosen first, then the model trains on them.
void retrain(ModelBundle& bundle, ExportOptions& options, bool rows) {
  const std::string table = pq_table(bundle);
  options.kept_rows = top_norm_rows(bundle.model->named_parameters()[table], options.cutoff);
  const RetrainSummary s = retrain_kept_rows(bundle, {table, options.kept_rows, rows});
  options.retrained =
      fmt::format("{} for {} epochs ({} steps, {} examples, last epoch loss {:.4f})",
                  rows ? "output layer and kept rows" : "output layer", s.epochs, s.steps,
                  s.examples, s.last_epoch_loss);
}

std::string weights_words(const ExportOptions& o) {
  if (o.quantize == "pq") {
    return fmt::format("pq: dsub {}{}{}{}", o.dsub,
                       o.cutoff > 0 ? fmt::format(", cutoff {}", o.cutoff) : "",
                       o.qnorm ? ", qnorm" : "", o.qout ? ", qout" : "");
  }
  return o.quantize == "int8" ? "int8 weights" : o.dtype == "bf16" ? "bf16" : "fp32";
}

void run_export(ExportArgs args) {
  const auto lock = check_export_target(args);
  ModelBundle bundle = load_run(args.run_dir, retrain_overrides(args));
  bundle.model->to(torch::kCPU);
  check_pq_options(bundle, args.options);
  if (args.retrain || args.retrain_output) {
    check_retrain(args);
    check_retrain_data(args, bundle.config);
    retrain(bundle, args.options, args.retrain);
  }
  const int64_t bytes = export_run(bundle, args.out, args.options);
  const std::string weights = weights_words(args.options);
  const std::string& retrained = args.options.retrained;
  std::cout << fmt::format("wrote {} ({} {}, {}, {:.1f} MB{})\n", args.out,
                           bundle.config.model.type, bundle.task.masked_lm ? "encoder" : "model",
                           weights, static_cast<double>(bytes) / 1e6,
                           retrained.empty() ? "" : "; retrained the " + retrained);
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand(
      "export", "Write a trained run's model as one TorchScript file (C++ and Python).");
  cmd->add_option("run_dir", args->run_dir, "Run folder of a trained model")->required();
  cmd->add_option("--out", args->out, "The TorchScript file to write")->required();
  cmd->add_option("--quantize", args->options.quantize,
                  "none; int8: Linear layers and RNN gates run by int8 kernels (packed for "
                  "the loading process's quantized engine), embedding tables and convolutions "
                  "stored as int8 with a scale per row; pq (fasttext): the embedding table "
                  "product-quantized as fastText's quantize (256 centroids a sub-vector)")
      ->capture_default_str();
  cmd->add_option("--cutoff", args->options.cutoff,
                  "pq: keep the K embedding rows (words and n-gram buckets) of largest norm; "
                  "the ids of the others leave their bags (0: keep all)")
      ->capture_default_str();
  cmd->add_option("--dsub", args->options.dsub, "pq: dimensions of a sub-vector")
      ->capture_default_str();
  cmd->add_flag("--qnorm", args->options.qnorm,
                "pq: store rows normalised and quantize their norms apart");
  cmd->add_flag("--qout", args->options.qout, "pq: product-quantize the output matrix too");
  cmd->add_flag("--retrain", args->retrain,
                "with --cutoff: train the output layer and the kept rows again for the run's "
                "epochs on its training data before quantizing (as fastText)");
  cmd->add_flag("--retrain-output", args->retrain_output,
                "with --cutoff: as --retrain, the output layer only");
  cmd->add_option("--data", args->data,
                  "with --retrain: the training files to retrain on (paths, globs, folders or "
                  "@lists, as data.train.path), for a run whose data moved or an imported run");
  cmd->add_option("--set", args->sets,
                  "with --retrain: KEY=VALUE changes to the run's config for the retraining "
                  "(e.g. train.epochs=2, data.format=tsv)");
  cmd->add_option("--dtype", args->options.dtype,
                  "fp32, or bf16: weights and computation in bf16, logits in fp32 (not with "
                  "--quantize)")
      ->capture_default_str();
  cmd->callback([args] { run_export(*args); });
}

}  // namespace sift::cli
