// sift tune: a hyperparameter search within a wall-time budget (tools/tune/tuner.h).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "config/loader.h"
#include "core/error.h"
#include "core/printable.h"
#include "framework/runtime/base/data_plan.h"
#include "framework/runtime/base/task.h"
#include "models/model.h"
#include "tools/sift/commands.h"
#include "tools/sift/train_options.h"
#include "tools/tune/tuner.h"

namespace sift::cli {
namespace {

// The program trials run (`sift train` runs of the same build): `sift` beside this one,
// which trains the fastText model's fast-path runs without loading LibTorch (0.35-0.5 s a
// trial here) and hands every other run to this program; this program itself with
// SIFT_LITE=0 or without `sift` beside it.
std::string trial_program() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) throw Error("cannot find the sift program (/proc/self/exe)");
  const std::string self(buf, static_cast<size_t>(n));
  const std::filesystem::path front = std::filesystem::path(self).parent_path() / "sift";
  const char* use_lite = std::getenv("SIFT_LITE");
  if ((use_lite != nullptr && std::string(use_lite) == "0") || !std::filesystem::exists(front)) {
    return self;
  }
  return front.string();
}

// --metric f1:LABEL names a label of the training data; checked before any trial, since
// every trial would stop on it.
void check_metric_label(const TuneOptions& o) {
  const std::string label = metric_label(o.metric);
  if (label.empty()) return;
  const auto labels = training_labels(resolve_data(load_config(o.config, o.overrides)), label);
  if (std::find(labels.begin(), labels.end(), label) != labels.end()) return;
  throw Error(fmt::format("--metric {}: '{}' is not a label of the training data ({})", o.metric,
                          printable(label), printable(some_labels(labels))));
}

}  // namespace

void add_tune_command(CLI::App& app) {
  struct Args {
    TuneOptions options;
    std::string budget, max_size, resume;
    bool json = false, quiet = false, no_refit = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "tune", "Search hyperparameters within a time budget; trials are ordinary runs.");
  auto* config = cmd->add_option("config", args->options.config,
                                 "YAML config file (with an "
                                 "optional tune: section)");
  auto* resume = cmd->add_option("--resume", args->resume, "Go on with the search in this folder");
  config->excludes(resume);
  cmd->add_option("--budget", args->budget, "Wall time of the whole search: 90s, 10m, 1h");
  cmd->add_option("--metric", args->options.metric,
                  "accuracy, macro_f1, micro_f1 (multi-label) or f1:LABEL (one label's F1)")
      ->capture_default_str();
  cmd->add_option("--trials", args->options.trials, "Most trials; 0: as many as the budget allows")
      ->capture_default_str();
  cmd->add_option("--parallel", args->options.parallel,
                  "Trials at once, each with its share of the cores")
      ->capture_default_str();
  cmd->add_option("--max-model-size", args->max_size,
                  "Only models whose int8 export fits count as winners: 500K, 2M, 1G");
  cmd->add_option("--seed", args->options.seed, "The sampler's seed")->capture_default_str();
  cmd->add_option("--out", args->options.out, "The search folder (default: RUN.dir/NAME-tune)");
  cmd->add_option("--set", args->options.overrides, "Fix a config key: --set train.epochs=3")
      ->type_name("KEY=VALUE");
  cmd->add_flag("--no-refit", args->no_refit,
                "Keep the winning trial as it is (default: train its settings again on "
                "train + valid within the budget, as fastText's autotune does)");
  cmd->add_flag("--json", args->json, "Print the summary as JSON on stdout");
  cmd->add_flag("--quiet", args->quiet,
                "No progress lines on stderr (one per trial; every line is in OUT/tune.log)");
  cmd->callback([args, cmd] {
    TuneOptions& o = args->options;
    o.quiet = args->quiet;
    o.print_summary = !args->json;
    o.refit = !args->no_refit;
    if (o.config.empty() && args->resume.empty() && o.overrides.empty()) {
      throw CLI::RequiredError("a config file, --set keys or --resume TUNE_DIR");
    }
    const double budget = args->budget.empty() ? 0.0 : parse_duration(args->budget);
    o.stop_signal = catch_stop_signals();
    nlohmann::json summary;
    if (!args->resume.empty()) {
      const int64_t trials = cmd->count("--trials") > 0 ? o.trials : -1;
      summary = resume_tune(args->resume, budget, trials, model_traits(), trial_program(), o.quiet,
                            o.print_summary, o.stop_signal);
    } else {
      if (args->budget.empty()) throw CLI::RequiredError("--budget");
      o.budget_seconds = budget;
      if (!args->max_size.empty()) o.max_model_bytes = parse_size(args->max_size);
      o.validate();
      check_metric_label(o);
      summary = tune(o, model_traits(), trial_program());
    }
    if (args->json) std::cout << summary.dump(2) << std::endl;
  });
}

}  // namespace sift::cli
