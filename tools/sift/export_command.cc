#include <fmt/format.h>

#include <iostream>

#include "framework/runtime/export.h"
#include "tools/sift/commands.h"

namespace sift::cli {
namespace {

struct ExportArgs {
  std::string run_dir;
  std::string out;
  ExportOptions options;
};

void run_export(const ExportArgs& args) {
  ModelBundle bundle = load_run(args.run_dir);
  bundle.model->to(torch::kCPU);
  const int64_t bytes = export_run(bundle, args.out, args.options);
  std::cout << fmt::format("wrote {} ({} model, {}, {:.1f} MB)\n", args.out,
                           bundle.config.model.type,
                           args.options.quantize == "int8" ? "int8 weights" : "fp32",
                           static_cast<double>(bytes) / 1e6);
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand(
      "export", "Write a trained run's model as one TorchScript file (C++ and Python).");
  cmd->add_option("run_dir", args->run_dir, "Run folder of a trained model")->required();
  cmd->add_option("--out", args->out, "The TorchScript file to write")->required();
  cmd->add_option("--quantize", args->options.quantize,
                  "none, or int8: every weight matrix stored as int8 with a scale per row")
      ->capture_default_str();
  cmd->callback([args] { run_export(*args); });
}

}  // namespace sift::cli
