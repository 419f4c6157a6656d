#include <filesystem>
#include <functional>
#include <memory>

#include "config/loader.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "framework/runtime/base/init_from_config.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/train/base/restarts.h"
#include "framework/train/base/run_plan.h"
#include "framework/train/distributed.h"
#include "framework/train/trainer.h"
#include "models/base/traits.h"
#include "tools/sift/commands.h"
#include "tools/sift/train_options.h"

namespace sift::cli {
namespace {

// `sift train cfg.yaml` under `sift launch --max-restarts`: a restart continues the run
// folder from its last.ckpt (with this node's own --set of run.threads and the like: the
// saved config.yaml is rank 0's), or starts it again when the failure came before the first.
nlohmann::json train_or_restart(SiftConfig config, const std::vector<std::string>& overrides,
                                const TrainOptions& options) {
  const auto restart = restart_from_environment();
  if (!restart || restart->max_restarts == 0) return train(config, options);
  const std::string dir = restart_run_folder(config);
  if (restart->attempt == 0) return train(config, options);
  if (std::filesystem::exists(run_file(dir, kLastCheckpointFile))) {
    std::vector<std::string> own;
    for (const auto& o : overrides) {
      if (node_option(o.substr(0, o.find('=')))) own.push_back(o);
    }
    return resume(dir, own, options);
  }
  config.run.overwrite = true;  // only what the failed start wrote
  return train(config, options);
}

}  // namespace

void run_training(const TrainArgs& args,
                  const std::function<SiftConfig(const std::vector<std::string>&)>& load) {
  TrainOptions options;
  options.quiet = args.quiet;
  options.stop_signal = catch_stop_signals();
  options.allow_data_change = args.allow_data_change;
  const std::vector<std::string> overrides = train_overrides(args);
  nlohmann::json report;
  if (args.resume.empty()) {
    const SiftConfig config = load(overrides);
    if (!args.dump_config.empty()) {
      write_file_atomically(args.dump_config, dump_config(config, /*origins=*/true));
    }
    report = train_or_restart(config, overrides, options);
  } else {
    if (!args.dump_config.empty()) throw UsageError("--dump-config: not with --resume");
    report = resume(args.resume, overrides, options);
  }
  const auto dist = distributed_env_from_environment();
  if (dist && dist->rank != 0) return;  // rank 0 reports for the group
  print_train_report(report, args.json);
}

void add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  auto* cmd = app.add_subcommand("train", "Train a classifier from a YAML config.");
  add_train_options(*cmd, *args);
  cmd->callback([args] {
    run_training(*args, [args](const std::vector<std::string>& overrides) {
      return load_training_config(args->config, overrides, model_traits());
    });
  });
}

}  // namespace sift::cli
