#include <fmt/format.h>
#include <signal.h>

#include <atomic>
#include <iostream>

#include "config/loader.h"
#include "framework/train/distributed.h"
#include "framework/train/trainer.h"
#include "tools/sift/commands.h"
#include "tools/sift/summary.h"

namespace sift::cli {
namespace {

// The signal that asked training to stop (0: none). The handler only stores it: training
// sees it at the next step boundary, saves last.ckpt and throws sift::Interrupted.
std::atomic<int> stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "stored from a signal handler");

extern "C" void on_stop_signal(int signal_number) { stop_signal.store(signal_number); }

// SIGINT and SIGTERM stop training cleanly; SA_RESETHAND: a second one ends the process
// at once, for a user who will not wait for the save.
void catch_stop_signals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  for (int signal_number : {SIGINT, SIGTERM}) sigaction(signal_number, &action, nullptr);
}

}  // namespace

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
    options.stop_signal = &stop_signal;
    catch_stop_signals();
    if (args->config.empty() && args->resume.empty()) {
      throw CLI::RequiredError("a config file or --resume RUN_DIR");
    }
    if (args->overwrite) args->overrides.push_back("run.overwrite=true");
    const nlohmann::json report = args->resume.empty()
                                      ? train(load_config(args->config, args->overrides), options)
                                      : resume(args->resume, args->overrides, options);
    const auto dist = distributed_env_from_environment();
    if (dist && dist->rank != 0) return;  // rank 0 reports for the group
    if (report.contains("nothing_to_do")) {
      std::cout << (args->json ? report.dump(2) : report["nothing_to_do"].get<std::string>())
                << std::endl;
    } else if (args->json) {
      std::cout << summary_json(report).dump(2) << std::endl;
    } else {
      std::cout << summary_text(report);
    }
  });
}

}  // namespace sift::cli
