// sift cv: k-fold cross-validation. Each fold is an ordinary training run with
// data.folds and data.fold set (so any fold can be rerun alone); the report gives the
// test figures of every fold with their mean and standard deviation.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include "config/loader.h"
#include "config/metric_table.h"
#include "config/validate.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "framework/runtime/base/init_from_config.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/train/trainer.h"
#include "models/model.h"
#include "tools/sift/commands.h"

namespace sift::cli {
namespace {

struct CvArgs {
  std::string config;
  int64_t folds = 10;
  std::vector<std::string> overrides;
  bool json = false;
};

// Mean and sample standard deviation (n - 1) of one metric over the folds.
nlohmann::json mean_std(const std::vector<double>& v) {
  double mean = 0.0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double ss = 0.0;
  for (double x : v) ss += (x - mean) * (x - mean);
  const double sd = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
  return {{"mean", mean}, {"std", sd}};
}

void run_cv(const CvArgs& args) {
  if (args.folds < 2) throw Error("--folds: Cross-validation needs at least 2 folds.");
  std::vector<std::string> with_folds = args.overrides;
  with_folds.push_back(fmt::format("data.folds={}", args.folds));
  const SiftConfig base = load_training_config(args.config, with_folds, model_traits());
  validate(base, model_traits());  // before any fold trains (a data.test.path is refused)
  const std::string name =
      base.run.name.empty() ? std::filesystem::path(args.config).stem().string() : base.run.name;
  const std::string dir = (std::filesystem::path(base.run.dir) / (name + "-cv")).string();
  nlohmann::json report = {{"config", args.config}, {"folds", args.folds}, {"run_dir", dir}};
  std::map<std::string, std::vector<double>> values;
  for (int64_t k = 0; k < args.folds; ++k) {
    std::vector<std::string> o = args.overrides;
    for (const auto& s : {fmt::format("data.folds={}", args.folds), fmt::format("data.fold={}", k),
                          "run.dir=" + yaml_quoted(dir), fmt::format("run.name=fold-{}", k)}) {
      o.push_back(s);
    }
    TrainOptions quiet;
    quiet.quiet = true;
    const nlohmann::json run = train(load_training_config(args.config, o, model_traits()), quiet);
    const auto& test = run["splits"]["test"];
    nlohmann::json fold = {{"fold", k},
                           {"examples", test["examples"]},
                           {"train_seconds", run["train"]["seconds"]},
                           {"run_dir", run["run_dir"]}};
    std::vector<std::string> scores;
    for (const std::string& metric : metric_keys(&MetricName::score)) {
      if (!test.contains(metric)) continue;
      fold[metric] = test[metric];
      values[metric].push_back(test[metric].get<double>());
      scores.push_back(fmt::format("{} {:.4f}", metric_named(metric).title, values[metric].back()));
    }
    report["per_fold"].push_back(fold);
    if (!args.json) {
      std::cout << fmt::format("fold {}/{}: {} ({} examples, {:.0f} s)", k + 1, args.folds,
                               fmt::join(scores, ", "), test["examples"].get<int64_t>(),
                               run["train"]["seconds"].get<double>())
                << std::endl;
    }
  }
  std::vector<std::string> means;
  for (const auto& [metric, v] : values) {
    report[metric] = mean_std(v);
    means.push_back(fmt::format("{} {:.4f} +- {:.4f}", metric_named(metric).title,
                                report[metric]["mean"].get<double>(),
                                report[metric]["std"].get<double>()));
  }
  write_file_atomically(run_file(dir, kCrossValidationFile), report.dump(2) + "\n");
  if (args.json) {
    std::cout << report.dump(2) << std::endl;
    return;
  }
  std::cout << fmt::format("{} folds: {} (mean +- sample std)\nreport: {}/cv.json\n", args.folds,
                           fmt::join(means, ", "), dir);
}

}  // namespace

void add_cv_command(CLI::App& app) {
  auto args = std::make_shared<CvArgs>();
  auto* cmd = app.add_subcommand(
      "cv",
      "Cross-validate: train once per hashed fold of the training data, test on it, "
      "and report the mean and standard deviation over folds.");
  cmd->add_option("config", args->config, "YAML config file")->required();
  cmd->add_option("--folds", args->folds, "Number of folds")->capture_default_str();
  cmd->add_option("--set", args->overrides, "Override a config key: --set train.epochs=3")
      ->type_name("KEY=VALUE");
  cmd->add_flag("--json", args->json, "Print the report as JSON on stdout");
  cmd->callback([args] { run_cv(*args); });
}

}  // namespace sift::cli
