#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "core/error.h"
#include "framework/runtime/export.h"
#include "framework/runtime/run_folder.h"
#include "tools/sift/commands.h"

namespace sift::cli {
namespace {

struct ExportArgs {
  std::string run_dir;
  std::string out;
  ExportOptions options;
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

void run_export(const ExportArgs& args) {
  const auto lock = check_export_target(args);
  ModelBundle bundle = load_run(args.run_dir);
  bundle.model->to(torch::kCPU);
  const int64_t bytes = export_run(bundle, args.out, args.options);
  const std::string weights = args.options.quantize == "int8" ? "int8 weights"
                              : args.options.dtype == "bf16"  ? "bf16"
                                                              : "fp32";
  std::cout << fmt::format("wrote {} ({} model, {}, {:.1f} MB)\n", args.out,
                           bundle.config.model.type, weights, static_cast<double>(bytes) / 1e6);
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand(
      "export", "Write a trained run's model as one TorchScript file (C++ and Python).");
  cmd->add_option("run_dir", args->run_dir, "Run folder of a trained model")->required();
  cmd->add_option("--out", args->out, "The TorchScript file to write")->required();
  cmd->add_option("--quantize", args->options.quantize,
                  "none, or int8: Linear layers and RNN gates run by int8 kernels (packed for "
                  "the loading process's quantized engine), embedding tables and convolutions "
                  "stored as int8 with a scale per row")
      ->capture_default_str();
  cmd->add_option("--dtype", args->options.dtype,
                  "fp32, or bf16: weights and computation in bf16, logits in fp32 (not with "
                  "--quantize)")
      ->capture_default_str();
  cmd->callback([args] { run_export(*args); });
}

}  // namespace sift::cli
