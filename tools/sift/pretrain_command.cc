// `sift pretrain CONFIG`: masked-token pretraining of an encoder on unlabelled text
// (pretrain.*, docs/pretraining.md), trained by the one training loop as `sift train` is;
// its run folder is what train.init_from fine-tunes.
#include <memory>

#include "config/loader.h"
#include "framework/runtime/base/pretrain_config.h"
#include "models/base/traits.h"
#include "tools/sift/commands.h"
#include "tools/sift/train_options.h"

namespace sift::cli {

void add_pretrain_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  auto* cmd = app.add_subcommand(
      "pretrain",
      "Pretrain an encoder (masked-token prediction) on unlabelled text from a YAML config "
      "with a pretrain: section.");
  add_train_options(*cmd, *args);
  cmd->callback([args] {
    run_training(*args, [args](const std::vector<std::string>& overrides) {
      SiftConfig config = pretraining_config(load_config(args->config, overrides), model_traits());
      apply_model_defaults(config, model_traits());
      return config;
    });
  });
}

}  // namespace sift::cli
