// `sift train`'s options, stop signals and closing output, without LibTorch: sift-main's
// train command and sift-lite (tools/lite/, the fastText fast path without LibTorch)
// declare, catch and print them alike.
#pragma once

#include <CLI/CLI.hpp>
#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.h"

namespace sift::cli {

struct TrainArgs {
  std::string config;
  std::string resume;
  std::vector<std::string> overrides;
  bool json = false;
  bool quiet = false;
  int overwrite = 0;  // --overwrite given once (run.overwrite) or twice (and foreign files)
  bool allow_data_change = false;  // --resume with other data files, split or folds
  std::string dump_config;         // write the resolved config here before training
};

// `sift train` and `sift pretrain` (sift-main, train_command.cc): a new run from the config
// `load` gives for the --set overrides, or --resume; prints the summary.
void run_training(const TrainArgs& args,
                  const std::function<SiftConfig(const std::vector<std::string>&)>& load);

// Declares the options of `train` on `cmd`, into `args`.
void add_train_options(CLI::App& cmd, TrainArgs& args);

// The --set overrides with --overwrite's; CLI::RequiredError without a config, a --set or
// --resume.
std::vector<std::string> train_overrides(const TrainArgs& args);

// The signal that asked training to stop (0: none), set by catch_stop_signals' handler:
// training sees it at the next step boundary, saves last.ckpt and throws
// sift::Interrupted. SIGINT and SIGTERM; a second one ends the process at once, for a
// user who will not wait for the save.
const std::atomic<int>* catch_stop_signals();

// What train prints at the end: the report's summary (summary.h), or its JSON.
void print_train_report(const nlohmann::json& report, bool json);

}  // namespace sift::cli
