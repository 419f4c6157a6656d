#include <fmt/format.h>

#include <iostream>

#include "framework/config/loader.h"
#include "framework/trainer.h"
#include "tools/sift/commands.h"
#include "tools/sift/summary.h"

namespace sift::cli {

void add_train_command(CLI::App& app) {
  struct Args {
    std::string config;
    std::vector<std::string> overrides;
    bool json = false;
    bool quiet = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("train", "Train a classifier from a YAML config.");
  cmd->add_option("config", args->config, "YAML config file")->required();
  cmd->add_option("--set", args->overrides, "Override a config key: --set train.epochs=3")
      ->type_name("KEY=VALUE");
  cmd->add_flag("--json", args->json, "Print a machine-readable summary on stdout");
  cmd->add_flag("--quiet", args->quiet, "No progress output");
  cmd->callback([args] {
    const SiftConfig config = load_config(args->config, args->overrides);
    TrainOptions options;
    options.quiet = args->quiet;
    const nlohmann::json report = train(config, options);
    if (args->json) {
      std::cout << summary_json(report).dump(2) << std::endl;
    } else {
      std::cout << summary_text(report);
    }
  });
}

}  // namespace sift::cli
