#include <iostream>

#include "config/loader.h"
#include "core/error.h"
#include "framework/runtime/base/init_from_config.h"
#include "models/model.h"
#include "tools/sift/commands.h"

namespace sift::cli {

void add_config_command(CLI::App& app) {
  struct Args {
    std::string config;
    std::vector<std::string> overrides;
    bool dump = false;
    bool reference = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "config", "Check a config, print it resolved (--dump) or print the option reference.");
  cmd->add_option("config", args->config, "YAML config file (omit for the defaults)");
  cmd->add_option("--set", args->overrides, "Override a config key")->type_name("KEY=VALUE");
  cmd->add_flag("--dump", args->dump,
                "Print the resolved config: every option, its value and where the value came from "
                "(default, model default, FILE:LINE or --set)");
  cmd->add_flag("--reference", args->reference, "Print the option reference (Markdown)");
  cmd->callback([args] {
    if (args->reference) {
      std::cout << option_reference(model_traits());
      return;
    }
    const SiftConfig config = load_training_config(args->config, args->overrides, model_traits());
    if (args->dump) {
      std::cout << dump_config(config, /*origins=*/true);
    } else {
      std::cout << (args->config.empty() ? "defaults" : args->config) << ": ok\n";
    }
  });
}

}  // namespace sift::cli
