// `sift tune` end to end on the TREC fixture (600 questions): trials are real `sift train`
// processes of about a second each.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/tools/run_sift.h"
#include "tools/tune/trial_record.h"

namespace sift::testing {
namespace tune_cli_test {

const std::string kSource = SIFT_SOURCE_DIR;

// A fastText config on the TREC fixture with a small search space, so trials take about
// a second; `extra` is appended (more keys of the tune: section, say).
std::string write_config(const std::string& dir, const std::string& extra = "") {
  const std::string path = dir + "/trec.yaml";
  write_file(path,
             "run: {dir: " + dir +
                 "/runs, threads: 1, seed: 3}\n"
                 "data:\n  train: {path: " +
                 kSource +
                 "/tests/data/trec/TREC.train.sample}\n"
                 "  test: {path: " +
                 kSource +
                 "/tests/data/trec/TREC.test.sample}\n"
                 "  format: label_first\n  encoding: latin-1\n  valid_split: 0.2\n  workers: 1\n"
                 "model: {type: fasttext, dim: 10, ngrams: 2, buckets: 10000}\n"
                 "train: {epochs: 3, batch_size: 16, loss_reduction: sum,\n"
                 "        optimizer: {type: sgd, lr: 0.5}, scheduler: {type: linear}}\n"
                 "tune:\n  model.buckets: {int_log: [1000, 20000]}\n"
                 "  train.epochs: {int: [1, 4]}\n  model.dim: {int: [5, 20]}\n" +
                 extra);
  return path;
}

// Lines of `text` that begin with `prefix`.
int lines_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

double seconds_of(const std::function<void()>& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(OptionReferenceCli, SiftConfigReferenceMatchesTheCommittedDocs) {
  const std::string dir = make_temp_dir("reference");
  const SiftResult r = run_sift("config --reference", dir);
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(
      r.out.find("| fasttext | `train.optimizer.lr` log [0.05, 2]; `model.dim` int_log [10, 300]"),
      std::string::npos)
      << r;
  EXPECT_TRUE(r.out == slurp(kSource + "/docs/options.md"))
      << "docs/options.md is stale: regenerate it with `sift config --reference > docs/options.md`";
}

TEST(SiftTune, TheSearchEndsWithinItsBudgetAndLeavesTrialsABestConfigAndItsRun) {
  const std::string dir = make_temp_dir("tune_budget");
  const std::string config = write_config(dir);
  SiftResult r;
  const double wall = seconds_of([&] {
    r = run_sift("tune " + quote(config) + " --budget 15s --out " + quote(dir + "/t"), dir);
  });
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_LE(wall, 15 * 1.05 + 1.0) << r;  // + 1 s: the test's own process start-up
  const auto trials = read_trials_csv(dir + "/t/trials.csv");
  ASSERT_GE(trials.size(), 2u) << r;
  const auto summary = nlohmann::json::parse(slurp(dir + "/t/tune.json"));
  const std::string best_dir = summary["best"]["run_dir"];
  EXPECT_TRUE(std::filesystem::exists(best_dir + "/best.ckpt"));
  EXPECT_GT(summary["best"]["test"]["accuracy"].get<double>(), 0.3) << summary.dump(2);
  // best.yaml trains as it is.
  const SiftResult check = run_sift("config " + quote(dir + "/t/best.yaml"), dir);
  EXPECT_EQ(check.status, 0) << check;
  EXPECT_NE(r.out.find("<- best"), std::string::npos) << r;
}

TEST(SiftTune, SaysOneLinePerTrialOnStderrAndEndsWithTheTestFiguresOnStdout) {
  const std::string dir = make_temp_dir("tune_console");
  const std::string config = write_config(dir);
  const SiftResult r = run_sift(
      "tune " + quote(config) + " --budget 10m --trials 3 --out " + quote(dir + "/t"), dir);
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(lines_starting(r.err, "trial "), 3) << r;
  EXPECT_EQ(r.err.find("epoch 1:"), std::string::npos) << r;  // per-epoch lines: tune.log only
  EXPECT_NE(r.out.find("<- best"), std::string::npos) << r;
  const auto best = nlohmann::json::parse(slurp(dir + "/t/tune.json"))["best"];
  ASSERT_EQ(best["refit"]["status"], "finished") << best.dump(2);
  EXPECT_NE(
      r.out.find(fmt::format("test: accuracy {:.4f}", best["test"]["accuracy"].get<double>()) +
                 ", macro_f1"),
      std::string::npos)
      << r;
  EXPECT_NE(r.out.find("(trained again on train + valid); the winning trial alone: accuracy"),
            std::string::npos)
      << r;
  const std::string log = slurp(dir + "/t/tune.log");
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(log.find(fmt::format("trial {} started", i)), std::string::npos) << log;
    EXPECT_NE(log.find(fmt::format("trial {} epoch 1:", i)), std::string::npos) << log;
    EXPECT_TRUE(std::filesystem::exists(dir + fmt::format("/t/trials/trial-00{}.log", i)));
  }

  const SiftResult quiet = run_sift(
      "tune " + quote(config) + " --budget 10m --trials 2 --quiet --out " + quote(dir + "/q"), dir);
  ASSERT_EQ(quiet.status, 0) << quiet;
  EXPECT_EQ(quiet.err, "") << quiet;
  EXPECT_NE(quiet.out.find("test: accuracy"), std::string::npos) << quiet;
}

TEST(SiftTune, ASeededOneProcessSearchIsRepeatable) {
  const std::string dir = make_temp_dir("tune_seed");
  const std::string config = write_config(dir);
  for (const char* out : {"/a", "/b"}) {
    const SiftResult r = run_sift(
        "tune " + quote(config) + " --budget 10m --trials 4 --seed 7 --out " + quote(dir + out),
        dir);
    ASSERT_EQ(r.status, 0) << r;
  }
  const auto a = read_trials_csv(dir + "/a/trials.csv"), b = read_trials_csv(dir + "/b/trials.csv");
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(b.size(), 4u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].values, b[i].values) << "trial " << i;
    EXPECT_EQ(a[i].metric, b[i].metric) << "trial " << i;
    EXPECT_EQ(to_string(a[i].status), to_string(b[i].status)) << "trial " << i;
  }
}

TEST(SiftTune, TrialZeroTriesTheConfigsOwnValuesAndDrawsThoseOutsideTheirSpaces) {
  const std::string dir = make_temp_dir("tune_start");
  // batch_size 16 lies outside its space [20, 40]: trial 0 draws it.
  const std::string config = write_config(dir, "  train.batch_size: {int: [20, 40]}\n");
  const SiftResult r = run_sift(
      "tune " + quote(config) + " --budget 10m --trials 1 --out " + quote(dir + "/t"), dir);
  ASSERT_EQ(r.status, 0) << r;
  const auto trials = read_trials_csv(dir + "/t/trials.csv");
  ASSERT_EQ(trials.size(), 1u);
  const auto& v = trials[0].values;
  EXPECT_EQ(v.at("model.dim"), "10");
  EXPECT_EQ(v.at("model.buckets"), "10000");
  EXPECT_EQ(v.at("train.epochs"), "3");
  EXPECT_EQ(v.at("train.optimizer.lr"), "0.5");
  const int batch = std::stoi(v.at("train.batch_size"));
  EXPECT_GE(batch, 20);
  EXPECT_LE(batch, 40);
}

TEST(SiftTune, ResumeKeepsFinishedTrialsAndRunsOnlyNewOnes) {
  const std::string dir = make_temp_dir("tune_resume");
  const std::string config = write_config(dir);
  const std::string out = dir + "/t";
  ASSERT_EQ(run_sift("tune " + quote(config) + " --budget 10m --trials 2 --out " + quote(out), dir)
                .status,
            0);
  const auto before = read_trials_csv(out + "/trials.csv");
  const auto stamp = std::filesystem::last_write_time(out + "/trials/trial-000/config.yaml");
  const SiftResult r = run_sift("tune --resume " + quote(out) + " --trials 3", dir);
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(lines_starting(r.err, "trial 0 "), 0) << r;
  EXPECT_EQ(lines_starting(r.err, "trial 1 "), 0) << r;
  EXPECT_EQ(lines_starting(r.err, "trial 2 "), 1) << r;
  const auto after = read_trials_csv(out + "/trials.csv");
  ASSERT_EQ(after.size(), 3u);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(after[i].metric, before[i].metric);
  EXPECT_EQ(std::filesystem::last_write_time(out + "/trials/trial-000/config.yaml"), stamp);
  const SiftResult done = run_sift("tune --resume " + quote(out), dir);
  EXPECT_TRUE(CleanSiftError(done, {"all 3 trials are done", "--trials"}));
}

TEST(SiftTune, OnlyModelsThatFitMaxModelSizeWin) {
  const std::string dir = make_temp_dir("tune_size");
  // Bigrams make every model hold model.buckets x model.dim weights: 1000 x 5 at least.
  const std::string config = write_config(dir, "  model.ngrams: {choice: [2]}\n");
  const SiftResult small = run_sift(
      "tune " + quote(config) + " --budget 10m --trials 3 --max-model-size 4K --quiet --out " +
          quote(dir + "/a"),
      dir);
  // --quiet: the trials' progress lines would come before the error.
  EXPECT_TRUE(CleanSiftError(small, {"no trial fits --max-model-size 4000 bytes"}));
  const SiftResult fits =
      run_sift("tune " + quote(config) + " --budget 10m --trials 3 --max-model-size 150K --out " +
                   quote(dir + "/b"),
               dir);
  ASSERT_EQ(fits.status, 0) << fits;
  const auto summary = nlohmann::json::parse(slurp(dir + "/b/tune.json"));
  EXPECT_LE(summary["best"]["model_bytes"].get<double>(), 150e3);
  EXPECT_GT(summary["best"]["model_bytes"].get<double>(), 5e3);
}

// The lines of a file, each parsed as JSON.
std::vector<nlohmann::json> json_lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::istringstream in(slurp(path));
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

double f1_of(const nlohmann::json& per_class, const std::string& label) {
  for (const auto& row : per_class) {
    if (row["label"] == label) return row["f1"].get<double>();
  }
  ADD_FAILURE() << "no label " << label << " in " << per_class.dump();
  return -1;
}

TEST(SiftTune, AnF1MetricOfOneLabelTunesThatLabelsValidationF1) {
  const std::string dir = make_temp_dir("tune_f1");
  const std::string config = write_config(dir);
  // fastText's spelling, __label__ prefix included, names the label "4".
  const SiftResult r =
      run_sift("tune " + quote(config) + " --budget 10m --trials 3 --metric f1:__label__4 --out " +
                   quote(dir + "/t"),
               dir);
  ASSERT_EQ(r.status, 0) << r;
  double best = -1;
  for (const auto& trial : read_trials_csv(dir + "/t/trials.csv")) {
    double trial_best = -1;
    for (const auto& row : json_lines(trial.run_dir + "/metrics.jsonl")) {
      ASSERT_TRUE(row.contains("valid_per_class")) << row.dump();
      ASSERT_EQ(row["valid_per_class"].size(), 6u) << row.dump();  // every label's scores
      // The tuned figure is label 4's F1 of the same validation, not another one.
      EXPECT_EQ(row["valid_label_f1"].get<double>(), f1_of(row["valid_per_class"], "4"));
      EXPECT_NE(row["valid_label_f1"].get<double>(), row["valid_accuracy"].get<double>());
      trial_best = std::max(trial_best, row["valid_label_f1"].get<double>());
    }
    EXPECT_NEAR(trial.metric, trial_best, 1e-6) << trial.run_dir;
    best = std::max(best, trial.metric);
  }
  const auto summary = nlohmann::json::parse(slurp(dir + "/t/tune.json"));
  EXPECT_NEAR(summary["best"]["metric"].get<double>(), best, 1e-6);
  EXPECT_EQ(summary["best"]["test_metric"].get<double>(),
            f1_of(summary["best"]["test"]["per_class"], "4"))
      << summary.dump(2);
  EXPECT_NE(slurp(dir + "/t/best.yaml").find("label_f1"), std::string::npos);
}

TEST(SiftTune, AnF1MetricOfAnUnknownLabelIsRefusedListingTheLabels) {
  const std::string dir = make_temp_dir("tune_f1_bad");
  const std::string config = write_config(dir);
  EXPECT_TRUE(
      CleanSiftError(run_sift("tune " + quote(config) + " --budget 1m --metric f1:LOC", dir),
                     {"--metric f1:LOC", "'LOC' is not a label", "0, 1, 2, 3, 4, 5"}));
  EXPECT_TRUE(CleanSiftError(run_sift("tune " + quote(config) + " --budget 1m --metric f1:", dir),
                             {"--metric", "f1:LABEL"}));
  // A run told to follow a label it never sees stops before training.
  EXPECT_TRUE(CleanSiftError(
      run_sift(
          "train " + quote(config) + " --set train.best_metric=label_f1 --set train.best_label=LOC",
          dir),
      {"train.best_label: 'LOC' is not a label of the training data (0, 1, 2, 3, 4, 5)"}));
  EXPECT_FALSE(std::filesystem::exists(dir + "/runs/trec-tune"));
}

TEST(SiftTune, TheWinnerIsTrainedAgainOnTrainAndValidAndThatModelIsTheResult) {
  const std::string dir = make_temp_dir("tune_refit");
  const std::string config = write_config(dir);
  const SiftResult r = run_sift(
      "tune " + quote(config) + " --budget 10m --trials 3 --out " + quote(dir + "/t"), dir);
  ASSERT_EQ(r.status, 0) << r;
  const auto best = nlohmann::json::parse(slurp(dir + "/t/tune.json"))["best"];
  ASSERT_EQ(best["refit"]["status"], "finished") << best.dump(2);
  EXPECT_EQ(best["model"], dir + "/t/refit");
  EXPECT_EQ(best["refit"]["epochs"], best["best_epoch"]);
  const auto trial =
      nlohmann::json::parse(slurp(best["run_dir"].get<std::string>() + "/report.json"));
  const auto refit = nlohmann::json::parse(slurp(dir + "/t/refit/report.json"));
  // valid_split 0.2: the refit reads the fifth the trial validated on as well.
  const double trial_records = trial["train"]["records"], refit_records = refit["train"]["records"];
  EXPECT_GT(refit_records, trial_records * 1.15) << refit["train"].dump();
  EXPECT_EQ(refit["train"]["records"], 600);  // every line of the fixture
  EXPECT_FALSE(refit["splits"].contains("valid"));
  // The test figures are the refit's, the trial's kept beside them.
  EXPECT_EQ(best["test"], refit["splits"]["test"]);
  EXPECT_EQ(best["trial_test"], trial["splits"]["test"]);
  EXPECT_TRUE(std::filesystem::exists(dir + "/t/refit/best.ckpt") ||
              std::filesystem::exists(dir + "/t/refit/last.ckpt"));

  const SiftResult kept = run_sift(
      "tune " + quote(config) + " --budget 10m --trials 2 --no-refit --out " + quote(dir + "/n"),
      dir);
  ASSERT_EQ(kept.status, 0) << kept;
  const auto kept_best = nlohmann::json::parse(slurp(dir + "/n/tune.json"))["best"];
  EXPECT_EQ(kept_best["model"], kept_best["run_dir"]);
  EXPECT_FALSE(std::filesystem::exists(dir + "/n/refit"));
}

TEST(SiftTune, OnlyTheBestThreeTrialsKeepTheirCheckpoints) {
  const std::string dir = make_temp_dir("tune_keep");
  const std::string config = write_config(dir);
  const SiftResult r = run_sift(
      "tune " + quote(config) + " --budget 10m --trials 6 --no-refit --out " + quote(dir + "/t"),
      dir);
  ASSERT_EQ(r.status, 0) << r;
  auto trials = read_trials_csv(dir + "/t/trials.csv");
  ASSERT_EQ(trials.size(), 6u);
  std::stable_sort(trials.begin(), trials.end(),
                   [](const TrialRecord& a, const TrialRecord& b) { return a.metric > b.metric; });
  for (size_t i = 0; i < trials.size(); ++i) {
    const std::string& run = trials[i].run_dir;
    EXPECT_EQ(std::filesystem::exists(run + "/best.ckpt"), i < 3) << run;
    EXPECT_EQ(std::filesystem::exists(run + "/last.ckpt"), i < 3) << run;
    EXPECT_TRUE(std::filesystem::exists(run + "/metrics.jsonl")) << run;
  }
  const auto best = nlohmann::json::parse(slurp(dir + "/t/tune.json"))["best"];
  EXPECT_EQ(best["run_dir"], trials[0].run_dir);
}

// tune.html: the winner, the metric against time, a chart per tuned option and a row per
// trial; rendered by a real browser without a console error, as report.html is.
TEST(SiftTune, ThePageShowsTheSearchAndRendersInAHeadlessBrowser) {
  const std::string dir = make_temp_dir("tune_page");
  const std::string config = write_config(dir);
  const SiftResult r = run_sift(
      "tune " + quote(config) + " --budget 10m --trials 4 --out " + quote(dir + "/t"), dir);
  ASSERT_EQ(r.status, 0) << r;
  const std::string page = dir + "/t/tune.html";
  const std::string html = slurp(page);
  size_t rows = 0;
  for (size_t at = html.find("<tr><td>"); at != std::string::npos;
       at = html.find("<tr><td>", at + 1))
    ++rows;
  EXPECT_EQ(rows + 1, 4u);  // and the winner's row, marked
  EXPECT_NE(html.find("<tr class=\"best\">"), std::string::npos);
  for (const char* key : {"model.buckets", "model.dim", "train.epochs"}) {
    EXPECT_NE(html.find(std::string("<figcaption>") + key), std::string::npos) << key;
  }
  const auto dom = headless_chromium(page, "--dump-dom", dir);
  ASSERT_EQ(dom.status, 0) << dom;
  for (const char* part : {"id=\"winner\"", "id=\"progress\"", "id=\"parameters\"", "id=\"trials\"",
                           "<polyline", "<circle", "best so far"}) {
    EXPECT_NE(dom.out.find(part), std::string::npos) << part;
  }
  EXPECT_EQ(dom.err.find("CONSOLE"), std::string::npos) << dom.err;
  EXPECT_EQ(dom.err.find("Content Security Policy"), std::string::npos) << dom.err;
  // Issue #38: "test accuracy" was listed twice, and a column per tuned option made the
  // page 1,562 px wide (it scrolled sideways at 1280 and 800 px).
  size_t listed = 0;
  for (size_t at = html.find("<th>test accuracy</th>"); at != std::string::npos;
       at = html.find("<th>test accuracy</th>", at + 1))
    ++listed;
  EXPECT_EQ(listed, 1u);
  for (const int width : {1280, 800}) {
    const std::string wide = testing::elements_past_the_edge(page, width, dir);
    EXPECT_EQ(wide.find(' '), std::string::npos) << width << " px: " << wide;
    EXPECT_EQ(wide.find("no measurement"), std::string::npos) << wide;
  }
}

TEST(SiftTune, BadInputStopsBeforeAnyTrialWithOneLineNamingTheKey) {
  const std::string dir = make_temp_dir("tune_bad");
  const std::string good = write_config(dir);
  EXPECT_TRUE(CleanSiftError(run_sift("tune " + quote(good) + " --budget 3s", dir),
                             {"--budget", "shorter than one trial"}));
  EXPECT_TRUE(
      CleanSiftError(run_sift("tune " + quote(good) + " --budget 1m --set data.valid_split=0", dir),
                     {"needs validation data", "data.valid.path", "data.valid_split"}));
  const std::string inverted = dir + "/inverted";
  std::filesystem::create_directories(inverted);
  EXPECT_TRUE(CleanSiftError(
      run_sift("tune " +
                   quote(write_config(inverted, "  train.optimizer.lr: {log: [1.0, 0.1]}\n")) +
                   " --budget 1m",
               dir),
      {"tune.train.optimizer.lr", "empty or inverted"}));
  const std::string foreign = dir + "/foreign";
  std::filesystem::create_directories(foreign);
  EXPECT_TRUE(CleanSiftError(
      run_sift("tune " + quote(write_config(foreign, "  model.filters: {int: [10, 100]}\n")) +
                   " --budget 1m",
               dir),
      {"model.filters", "does not apply to model.type fasttext"}));
  EXPECT_TRUE(CleanSiftError(run_sift("tune " + quote(good) + " --budget 1m --metric f2", dir),
                             {"--metric"}));
  EXPECT_FALSE(std::filesystem::exists(dir + "/runs"));  // no trial started
}

}  // namespace tune_cli_test
}  // namespace sift::testing
