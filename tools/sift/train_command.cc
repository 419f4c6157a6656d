#include <fmt/format.h>

#include <iostream>

#include "config/loader.h"
#include "framework/train/distributed.h"
#include "framework/train/trainer.h"
#include "tools/sift/commands.h"
#include "tools/sift/summary.h"

namespace sift::cli {

void add_train_command(CLI::App& app) {
  struct Args {
    std::string config;
    std::string resume;
    std::vector<std::string> overrides;
    bool json = false;
    bool quiet = false;
    bool overwrite = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("train", "Train a classifier from a YAML config.");
  auto* config = cmd->add_option("config", args->config, "YAML config file");
  auto* resume_from = cmd->add_option("--resume", args->resume,
                                      "Continue the run in this folder from its last.ckpt");
  config->excludes(resume_from);
  resume_from->excludes(config);
  cmd->add_option("--set", args->overrides, "Override a config key: --set train.epochs=3")
      ->type_name("KEY=VALUE");
  cmd->add_flag("--json", args->json, "Print a machine-readable summary on stdout");
  cmd->add_flag("--quiet", args->quiet, "No progress output");
  cmd->add_flag("--overwrite", args->overwrite,
                "Replace the run folder if it is not empty (run.overwrite: true)")
      ->excludes(resume_from);
  cmd->callback([args] {
    TrainOptions options;
    options.quiet = args->quiet;
    if (args->config.empty() && args->resume.empty()) {
      throw CLI::RequiredError("a config file or --resume RUN_DIR");
    }
    if (args->overwrite) args->overrides.push_back("run.overwrite=true");
    const nlohmann::json report = args->resume.empty()
                                      ? train(load_config(args->config, args->overrides), options)
                                      : resume(args->resume, args->overrides, options);
    const auto dist = distributed_env_from_environment();
    if (dist && dist->rank != 0) return;  // rank 0 reports for the group
    if (args->json) {
      std::cout << summary_json(report).dump(2) << std::endl;
    } else {
      std::cout << summary_text(report);
    }
  });
}

}  // namespace sift::cli
