#include "tools/sift/train_options.h"

#include <signal.h>

#include <iostream>

#include "tools/sift/summary.h"

namespace sift::cli {
namespace {

std::atomic<int> stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "stored from a signal handler");

extern "C" void on_stop_signal(int signal_number) { stop_signal.store(signal_number); }

}  // namespace

void add_train_options(CLI::App& cmd, TrainArgs& args) {
  auto* config = cmd.add_option("config", args.config, "YAML config file");
  auto* resume_from =
      cmd.add_option("--resume", args.resume, "Continue the run in this folder from its last.ckpt");
  config->excludes(resume_from);
  resume_from->excludes(config);
  cmd.add_option("--set", args.overrides, "Override a config key: --set train.epochs=3")
      ->type_name("KEY=VALUE");
  cmd.add_flag("--json", args.json, "Print a machine-readable summary on stdout");
  cmd.add_flag("--quiet", args.quiet, "No progress output");
  cmd.add_flag("--overwrite", args.overwrite,
               "Replace the run folder if it is not empty (run.overwrite: true); twice "
               "(--overwrite --overwrite) also when it holds files Sift did not write "
               "(run.overwrite_foreign: true)")
      ->excludes(resume_from);
  cmd.add_flag("--allow-data-change", args.allow_data_change,
               "--resume: accept --set of data.train.path, data.valid.path, data.valid_split, "
               "data.folds or data.fold (refused otherwise: validation would score records "
               "the model trained on); report.json records the keys")
      ->needs(resume_from);
  cmd.add_option("--dump-config", args.dump_config,
                 "Write the resolved config (every key, and where each value came from) to "
                 "this file before training");
}

std::vector<std::string> train_overrides(const TrainArgs& args) {
  // No file: the defaults and --set (`sift train --set data.train.path=train.txt`).
  if (args.config.empty() && args.resume.empty() && args.overrides.empty()) {
    throw CLI::RequiredError("a config file, --set data.train.path=FILE or --resume RUN_DIR");
  }
  std::vector<std::string> overrides = args.overrides;
  if (args.overwrite > 0) overrides.push_back("run.overwrite=true");
  if (args.overwrite > 1) overrides.push_back("run.overwrite_foreign=true");
  return overrides;
}

const std::atomic<int>* catch_stop_signals() {
  stop_signal.store(0);  // a second run in one process (the Python module) starts afresh
  // SA_RESETHAND: a second signal ends the process at once.
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  for (int signal_number : {SIGINT, SIGTERM}) sigaction(signal_number, &action, nullptr);
  return &stop_signal;
}

void print_train_report(const nlohmann::json& report, bool json) {
  if (report.contains("nothing_to_do")) {
    std::cout << (json ? report.dump(2) : report["nothing_to_do"].get<std::string>()) << std::endl;
  } else if (json) {
    std::cout << summary_json(report).dump(2) << std::endl;
  } else {
    std::cout << summary_text(report);
  }
}

}  // namespace sift::cli
