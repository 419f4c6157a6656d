#include "tools/tune/tuner.h"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "config/loader.h"
#include "config/metric_table.h"
#include "config/validate.h"
#include "core/append_line.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/open_for_writing.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/train/base/train_options.h"
#include "models/base/traits.h"
#include "tools/tune/refit.h"
#include "tools/tune/trial.h"
#include "tools/tune/trial_record.h"
#include "tools/tune/tune_page.h"
#include "tools/tune/tune_space.h"

namespace sift {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The config file's stem, or "sift" for a search given by --set keys alone.
std::string config_name(const TuneOptions& o) {
  return o.config.empty() ? std::string("sift") : fs::path(o.config).stem().string();
}

// Trials stop this long before the deadline (SIGTERM: they save and exit) and are
// killed half of it later; the other half is for the winner's test evaluation. 4% of the
// budget, at least 4 s, so that a search ends within the budget + 5%.
double stop_margin(double budget) { return std::max(4.0, 0.04 * budget); }

// Random trials before the sampler starts mutating the best ones.
int64_t random_trials(const TuneOptions& o) {
  return o.trials > 0 ? std::max<int64_t>(o.parallel, o.trials / 3)
                      : std::max<int64_t>(o.parallel, 6);
}

// The metrics.jsonl key of the tuned metric (the trials' train.best_metric).
std::string metric_field(const std::string& metric) {
  return metric_label(metric).empty() ? "valid_" + metric : "valid_label_f1";
}

// train.best_metric (and train.best_label) of the tuned metric: best.ckpt is its best epoch.
std::vector<std::string> metric_overrides(const std::string& metric) {
  const std::string label = metric_label(metric);
  if (label.empty()) return {"train.best_metric=" + metric};
  return {"train.best_metric=label_f1", "train.best_label=" + yaml_quoted(label)};
}

// The tuned metric in a split of report.json (or of `sift eval --json`); NaN if absent.
double metric_in(const nlohmann::json& split, const std::string& metric) {
  if (!split.is_object()) return std::nan("");
  const std::string label = metric_label(metric);
  if (label.empty()) return split.value(metric, std::nan(""));
  for (const auto& row : split.value("per_class", nlohmann::json::array())) {
    if (row.value("label", "") == label) return row.value("f1", std::nan(""));
  }
  return std::nan("");
}

std::string trial_name(int64_t number) { return fmt::format("trial-{:03d}", number); }

int64_t count_lines(const std::string& path) {
  std::ifstream in(path);
  int64_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

// Bytes of the int8 export (one byte per weight, scales aside): what the model type's
// options imply plus an embedding row per vocabulary word and an output row per label.
double model_bytes(const SiftConfig& cfg, const ModelTraits& traits, const std::string& run_dir) {
  const double vocab = double(count_lines(run_file(run_dir, kVocabFile)));
  const double labels = double(count_lines(run_file(run_dir, kLabelsFile)));
  const double own = traits.parameters ? traits.parameters(cfg.model) : 0.0;
  return own + vocab * double(cfg.model.dim) + labels * (double(cfg.model.dim) + 1);
}

// Whether a trial counts: it validated, and its model fits --max-model-size (0: any).
bool may_win(const TrialRecord& r, double max_bytes) {
  return r.has_metric && (max_bytes <= 0 || (r.model_bytes > 0 && r.model_bytes <= max_bytes));
}

std::vector<std::string> keys_of(const std::vector<TunedParam>& params) {
  std::vector<std::string> keys;
  for (const auto& p : params) keys.push_back(p.key);
  return keys;
}

std::string values_text(const std::map<std::string, std::string>& values) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : values) parts.push_back(k.substr(k.rfind('.') + 1) + "=" + v);
  return fmt::format("{}", fmt::join(parts, " "));
}

nlohmann::json options_json(const TuneOptions& o) {
  return {{"config", o.config},
          {"overrides", o.overrides},
          {"budget_seconds", o.budget_seconds},
          {"metric", o.metric},
          {"trials", o.trials},
          {"parallel", o.parallel},
          {"seed", o.seed},
          {"max_model_bytes", o.max_model_bytes},
          {"eta", o.eta},
          {"refit", o.refit}};
}

TuneOptions options_from_json(const nlohmann::json& j, const std::string& dir) {
  TuneOptions o;
  o.config = j.at("config").get<std::string>();
  o.overrides = j.at("overrides").get<std::vector<std::string>>();
  o.budget_seconds = j.at("budget_seconds").get<double>();
  o.metric = j.at("metric").get<std::string>();
  o.trials = j.at("trials").get<int64_t>();
  o.parallel = j.at("parallel").get<int64_t>();
  o.seed = j.at("seed").get<uint64_t>();
  o.max_model_bytes = j.at("max_model_bytes").get<double>();
  o.eta = j.at("eta").get<int64_t>();
  o.refit = j.value("refit", true);
  o.out = dir;
  return o;
}

std::string last_error(const std::string& run_dir);
const TrialRecord* best_record(const std::vector<TrialRecord>& records, double max_bytes);

struct Running {
  TrialRecord record;
  std::unique_ptr<TrialProcess> process;
  double earlier_seconds = 0;    // of an interrupted trial, before this session resumed it
  double first_validation = -1;  // seconds from start to its first validation
  // Each signal goes once: a second SIGTERM makes `sift train` end at once, without the
  // save the first one asked for.
  bool terminated = false, killed = false;
  void stop(int sig) {
    bool& sent = sig == SIGKILL ? killed : terminated;
    if (!sent) process->signal(sig);
    sent = true;
  }
};

// One search: starts trials while the budget allows, prunes at the rungs, records.
class Search {
 public:
  Search(TuneOptions options, const std::vector<ModelTraits>& models, std::string program,
         std::vector<TrialRecord> done, double spent)
      : o_(std::move(options)),
        base_(load_config(o_.config, o_.overrides, models)),
        traits_(traits_of(base_.model.type)),
        params_(tuned_params(base_, traits_, o_.overrides)),
        sampler_(params_, o_.seed, random_trials(o_), start_values(base_, params_)),
        program_(std::move(program)),
        records_(std::move(done)),
        spent_(spent) {
    validate(base_, models);
    for (const auto& r : records_) {
      next_ = std::max(next_, r.number + 1);
    }
    // Interrupted trials go on from their last.ckpt before any new one starts.
    const auto interrupted =
        std::stable_partition(records_.begin(), records_.end(),
                              [](const auto& r) { return r.status != TrialStatus::interrupted; });
    resumable_.assign(interrupted, records_.end());
    records_.erase(interrupted, records_.end());
  }

  nlohmann::json run(double budget);

 private:
  void step();
  bool may_start(double now) const;
  void start_trial();
  void resume_trial();
  // Stops the running trials on `signal` to this process, records them and throws
  // sift::Interrupted.
  [[noreturn]] void interrupt(int signal);
  // RUN/tune.json while the search runs: its options and how far it got.
  void write_state() const;
  void watch(Running& r);
  void prune_at_rung(Running& r, const Validation& v);
  void end_trial(Running& r);
  void end_finished();  // records and drops the trials whose process ended
  void stop_all(int signal);
  std::vector<ScoredTrial> scored() const;
  std::map<std::string, std::string> propose();
  // The base config with a trial's values: what its `sift train --set ...` resolves to.
  SiftConfig config_with(const std::map<std::string, std::string>& values) const;
  // `sift train` of `values` as run `folder`/`name` with `threads` threads.
  // `extra`: more --set keys, after the trial's.
  std::vector<std::string> trial_argv(const std::string& folder, const std::string& name,
                                      const std::map<std::string, std::string>& values,
                                      int64_t threads,
                                      const std::vector<std::string>& extra = {}) const;
  nlohmann::json finish();
  nlohmann::json winner_summary(const TrialRecord& winner);
  Error no_winner() const;
  // RUN/tune.html; `summary` null while the search runs.
  void write_page(const nlohmann::json& summary) const;
  void drop_losing_checkpoints() const;
  double search_end() const;
  void update_reserve();
  nlohmann::json refit(const TrialRecord& winner);
  // `line` to OUT/tune.log, after the search's seconds so far; also on stderr when
  // `to_console` (one line per trial, and the refit's) and not --quiet.
  void log(const std::string& line, bool to_console = false) const {
    append_line(run_file(o_.out, kTuneLogFile), fmt::format("[{:7.1f} s] {}", elapsed(), line));
    if (to_console && !o_.quiet) std::cerr << line << std::endl;
  }
  void say(const std::string& line) const { log(line, true); }
  // The ending of trial `r`, with the best so far: the one line a trial gets on stderr.
  std::string trial_line(const TrialRecord& r) const;
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  TuneOptions o_;
  SiftConfig base_;
  const ModelTraits& traits_;
  std::vector<TunedParam> params_;
  Sampler sampler_;
  std::string program_;
  std::vector<TrialRecord> records_;
  std::vector<TrialRecord> resumable_;  // interrupted by an earlier session
  std::vector<std::unique_ptr<Running>> running_;
  std::map<int64_t, std::vector<double>> rungs_;  // rung epoch -> metrics seen there
  std::vector<double> first_validations_;
  int64_t next_ = 0;
  int64_t started_ = 0;  // trials started by this session
  double spent_ = 0;     // seconds of earlier sessions of this search
  double budget_ = 0;
  double reserve_ = 0;  // seconds kept for the refit at the end
  Clock::time_point start_ = Clock::now();
};

int64_t cores() { return std::max<int64_t>(1, std::thread::hardware_concurrency()); }

std::vector<std::string> Search::trial_argv(const std::string& folder, const std::string& name,
                                            const std::map<std::string, std::string>& values,
                                            int64_t threads,
                                            const std::vector<std::string>& extra) const {
  std::vector<std::string> argv = {program_, "train", "--quiet"};
  if (!o_.config.empty()) argv.push_back(o_.config);  // otherwise the --set keys alone
  std::vector<std::string> sets = o_.overrides;
  for (const auto& [k, v] : values) sets.push_back(k + "=" + v);
  sets.push_back("run.dir=" + yaml_quoted(folder));
  sets.push_back("run.name=" + name);
  sets.push_back(fmt::format("run.threads={}", threads));
  sets.push_back("train.eval_every=0");  // a validation at every epoch's end: the rungs
  for (const auto& set : metric_overrides(o_.metric)) sets.push_back(set);
  sets.insert(sets.end(), extra.begin(), extra.end());
  for (const auto& s : sets) {
    argv.push_back("--set");
    argv.push_back(s);
  }
  return argv;
}

std::vector<ScoredTrial> Search::scored() const {
  std::vector<ScoredTrial> out;
  for (const auto& r : records_) {
    if (r.has_metric) out.push_back({r.values, r.metric});
  }
  return out;
}

SiftConfig Search::config_with(const std::map<std::string, std::string>& values) const {
  SiftConfig c = base_;
  for (const auto& [k, v] : values) apply_override(c, k + "=" + v);
  check_options(c);
  return c;
}

// A proposal whose model alone is over --max-model-size is drawn again (50 tries).
std::map<std::string, std::string> Search::propose() {
  const auto done = scored();
  for (int64_t attempt = 0;; ++attempt) {
    auto values = sampler_.propose(next_, done, attempt);
    if (o_.max_model_bytes <= 0 || attempt >= 50 || !traits_.parameters) return values;
    if (traits_.parameters(config_with(values).model) <= o_.max_model_bytes) return values;
  }
}

bool Search::may_start(double now) const {
  if (resumable_.empty() && o_.trials > 0 && next_ >= o_.trials) return false;
  if (int64_t(running_.size()) >= o_.parallel) return false;
  const double left = search_end() - now;
  // Until a trial has validated once, its duration is unknown: only the first batch.
  if (first_validations_.empty()) return left > 0 && started_ < o_.parallel;
  // Only trials that can validate once before the deadline are worth starting.
  std::vector<double> t = first_validations_;
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return left > t[t.size() / 2];
}

// A trial folder that no record holds (its search was killed while it ran) is made again,
// unless a process still holds its run.lock: that trial's `sift train` is still running.
void clear_trial_folder(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(dir, ec))) return;
  std::unique_ptr<RunFolderLock> lock;
  try {
    lock = std::make_unique<RunFolderLock>(dir);
  } catch (const Error& e) {
    throw Error(fmt::format("{} (a trial of an earlier sift tune; its folder is kept)", e.what()));
  }
  fs::remove_all(dir);
}

void Search::resume_trial() {
  auto r = std::make_unique<Running>();
  r->record = resumable_.front();
  resumable_.erase(resumable_.begin());
  r->earlier_seconds = r->record.seconds;
  r->record.status = TrialStatus::finished;
  r->record.reason.clear();
  r->record.has_metric = false;  // read again from the whole metrics.jsonl
  r->record.epochs = 0;
  ++started_;
  const std::string log = r->record.run_dir + ".log";
  r->process = std::make_unique<TrialProcess>(
      std::vector<std::string>{program_, "train", "--resume", r->record.run_dir, "--quiet"}, log,
      run_file(r->record.run_dir, kMetricsFile), metric_field(o_.metric), /*append_log=*/true);
  say(fmt::format("trial {} resumed: {}", r->record.number, values_text(r->record.values)));
  running_.push_back(std::move(r));
}

void Search::start_trial() {
  if (!resumable_.empty()) return resume_trial();
  auto r = std::make_unique<Running>();
  r->record.number = next_;
  r->record.values = propose();
  r->record.started = spent_ + elapsed();
  const std::string name = trial_name(next_++);
  ++started_;
  const fs::path dir = fs::path(o_.out) / kTrialsFolder;
  r->record.run_dir = (dir / name).string();
  clear_trial_folder(r->record.run_dir);  // left by a killed search (resume reruns it)
  const int64_t threads = std::max<int64_t>(1, cores() / o_.parallel);
  r->process = std::make_unique<TrialProcess>(
      trial_argv(dir.string(), name, r->record.values, threads), (dir / (name + ".log")).string(),
      run_file(r->record.run_dir, kMetricsFile), metric_field(o_.metric));
  log(fmt::format("trial {} started: {}", r->record.number, values_text(r->record.values)));
  running_.push_back(std::move(r));
}

void Search::prune_at_rung(Running& r, const Validation& v) {
  // Rungs at epochs eta, eta^2, ...: none at epoch 1, where a trial with a long linear
  // decay of its rate still trails (TREC sample: 0.15 after 1 of 4 epochs, 0.58 at the end).
  int64_t rung = o_.eta;
  while (rung < v.epoch) rung *= o_.eta;
  if (rung != v.epoch) return;
  auto& seen = rungs_[rung];
  seen.push_back(v.metric);
  if (int64_t(seen.size()) < o_.eta) return;  // too few to judge
  std::vector<double> sorted = seen;
  std::sort(sorted.rbegin(), sorted.rend());
  const double bar = sorted[std::max<size_t>(1, sorted.size() / size_t(o_.eta)) - 1];
  if (v.metric >= bar) return;
  r.record.status = TrialStatus::pruned;
  r.record.reason = fmt::format("epoch {}: {:.4f} is outside the best 1/{} at that rung ({:.4f})",
                                v.epoch, v.metric, o_.eta, bar);
  r.stop(SIGTERM);
}

void Search::watch(Running& r) {
  for (const Validation& v : r.process->new_validations()) {
    if (r.first_validation < 0) {
      r.first_validation = r.process->seconds();
      first_validations_.push_back(r.first_validation);
    }
    r.record.epochs = std::max(r.record.epochs, v.epoch);
    if (!r.record.has_metric || v.metric > r.record.metric) {
      r.record.metric = v.metric;
      r.record.best_epoch = v.epoch;
    }
    r.record.has_metric = true;
    log(fmt::format("trial {} epoch {}: {} {:.4f}", r.record.number, v.epoch, o_.metric, v.metric));
    if (r.record.status == TrialStatus::finished) prune_at_rung(r, v);
  }
}

void Search::end_trial(Running& r) {
  r.record.seconds = r.earlier_seconds + r.process->seconds();
  const int code = r.process->exit_code();
  if (r.record.status == TrialStatus::finished && code != 0) {
    r.record.status = TrialStatus::failed;
    r.record.reason = fmt::format("exit code {}: {}", code, last_error(r.record.run_dir));
  }
  if (fs::exists(run_file(r.record.run_dir, kVocabFile))) {
    r.record.model_bytes = model_bytes(config_with(r.record.values), traits_, r.record.run_dir);
  }
  records_.push_back(r.record);
  say(trial_line(r.record));
  std::sort(records_.begin(), records_.end(),
            [](const TrialRecord& a, const TrialRecord& b) { return a.number < b.number; });
  write_trials_csv(run_file(o_.out, kTrialsFile), records_, keys_of(params_));
  write_page(nullptr);
  write_state();
  drop_losing_checkpoints();
  update_reserve();
}

void Search::write_state() const {
  nlohmann::json state = options_json(o_);
  state["spent_seconds"] = spent_ + elapsed();
  state["trials_run"] = records_.size();
  write_file_atomically(run_file(o_.out, kTuneFile), state.dump(2) + "\n");
}

// How long stopped trials get to save before they are killed: a save is one checkpoint
// write, well under a second for the models a search tries (a chosen bound).
constexpr double kSaveSeconds = 30.0;

void Search::interrupt(int signal) {
  const char* name = signal == SIGINT ? "SIGINT" : "SIGTERM";
  for (auto& r : running_) {
    r->record.status = TrialStatus::interrupted;
    r->record.reason = fmt::format("{} to sift tune", name);
    r->stop(SIGTERM);
  }
  const auto start = Clock::now();
  while (!running_.empty()) {
    if (std::chrono::duration<double>(Clock::now() - start).count() > kSaveSeconds) {
      for (auto& r : running_) r->stop(SIGKILL);
    }
    end_finished();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  write_state();
  throw Interrupted(fmt::format("tune stopped by {}: the running trials saved and are recorded "
                                "as interrupted; go on with `sift tune --resume {}`",
                                name, o_.out),
                    signal);
}

// Checkpoints kept: the best few trials' (a winner, and the next ones for a look); a model
// of 2M buckets x dim 100 is 800 MB a checkpoint, and a search runs a hundred trials.
constexpr size_t kCheckpointsKept = 3;

// The checkpoints of trials that can no longer win (outside the best kCheckpointsKept, or
// over --max-model-size) are deleted; their logs, metrics and reports stay.
void Search::drop_losing_checkpoints() const {
  std::vector<const TrialRecord*> ranked;
  for (const auto& r : records_) ranked.push_back(&r);
  auto eligible = [&](const TrialRecord* r) { return may_win(*r, o_.max_model_bytes); };
  std::stable_sort(ranked.begin(), ranked.end(), [&](const TrialRecord* a, const TrialRecord* b) {
    if (eligible(a) != eligible(b)) return eligible(a);
    return eligible(a) && a->metric > b->metric;
  });
  for (size_t i = 0; i < ranked.size(); ++i) {
    if (i < kCheckpointsKept && eligible(ranked[i])) continue;
    if (ranked[i]->status == TrialStatus::interrupted) continue;  // a resume goes on from it
    std::error_code ignored;
    fs::remove(run_file(ranked[i]->run_dir, kBestCheckpointFile), ignored);
    fs::remove(run_file(ranked[i]->run_dir, kLastCheckpointFile), ignored);
  }
}

void Search::write_page(const nlohmann::json& summary) const {
  const TunePage page{o_.config, o_.metric, metric_field(o_.metric), params_, records_, summary};
  write_file_atomically(run_file(o_.out, kTunePageFile), tune_page(page));
}

void Search::stop_all(int sig) {
  for (auto& r : running_) {
    if (r->record.status == TrialStatus::finished) {
      r->record.status = TrialStatus::budget;
      r->record.reason = "stopped at the end of the budget";
    }
    r->stop(sig);
  }
}

// Trials stop at the budget's end less its margin, and less the time the refit of the best
// trial so far will take.
double Search::search_end() const { return budget_ - stop_margin(budget_) - reserve_; }

// Refits longer than this share of the budget would take more from the search than they
// give: the search runs to the end instead (a chosen bound).
constexpr double kMostRefitShare = 0.3;

void Search::update_reserve() {
  reserve_ = 0.0;
  const TrialRecord* best = best_record(records_, o_.max_model_bytes);
  if (!o_.refit || best == nullptr) return;
  const RefitPlan plan = plan_refit(base_, *best);
  if (plan.why_not.empty() && plan.seconds <= kMostRefitShare * budget_) reserve_ = plan.seconds;
}

void Search::step() {
  const double now = elapsed();
  if (now >= search_end()) stop_all(SIGTERM);
  if (now >= search_end() + stop_margin(budget_) / 2) stop_all(SIGKILL);
  while (may_start(now)) start_trial();
  for (auto& r : running_) watch(*r);
  end_finished();
}

void Search::end_finished() {
  for (auto it = running_.begin(); it != running_.end();) {
    if ((*it)->process->running()) {
      ++it;
      continue;
    }
    watch(**it);  // the lines written before it ended
    end_trial(**it);
    it = running_.erase(it);
  }
}

nlohmann::json Search::run(double budget) {
  budget_ = budget;
  update_reserve();  // the trials of an earlier session may have a winner
  check_own_folder(o_.out, "--out", /*create=*/true);
  check_own_folder(run_file(o_.out, kTrialsFolder), "--out", /*create=*/true);
  write_state();
  say(fmt::format("sift tune: {} for {:.0f} s, {} at a time, searching {}", config_name(o_), budget,
                  o_.parallel, fmt::join(keys_of(params_), ", ")));
  while (true) {
    if (o_.stop_signal != nullptr && o_.stop_signal->load() != 0) interrupt(o_.stop_signal->load());
    step();
    if (running_.empty() && !may_start(elapsed())) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return finish();
}

// The test split of the run's report.json, or null when it has none (or no report).
nlohmann::json report_test(const std::string& run_dir) {
  std::ifstream in(run_file(run_dir, kReportJsonFile));
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_object() && j.contains("splits") && j["splits"].contains("test")) {
    return j["splits"]["test"];
  }
  return nullptr;
}

// The winner's test figures, from its report (a trial that ran to its end) or from
// `sift eval` on its best.ckpt (a trial stopped by ASHA or the budget).
nlohmann::json winner_test(const std::string& program, const std::string& run_dir,
                           const std::string& out) {
  if (nlohmann::json test = report_test(run_dir); !test.is_null()) return test;
  const std::string log = (fs::path(out) / "winner_test.json").string();
  TrialProcess eval({program, "eval", "--model", run_dir, "--json"}, log, "", "");
  while (eval.running()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::ifstream in(log);
  const auto j = nlohmann::json::parse(in, nullptr, false);
  return eval.exit_code() == 0 && j.is_object() ? j : nlohmann::json();
}

// The `sift: error:` line of a failed trial's log, or where to look.
std::string last_error(const std::string& run_dir) {
  std::ifstream in(run_dir + ".log");
  std::string line, found;
  while (std::getline(in, line)) {
    if (line.rfind("sift: error: ", 0) == 0) found = line.substr(13);
  }
  return found.empty() ? "see " + run_dir + ".log" : found;
}

const TrialRecord* best_record(const std::vector<TrialRecord>& records, double max_bytes) {
  const TrialRecord* best = nullptr;
  for (const auto& r : records) {
    if (!may_win(r, max_bytes) || !fs::exists(run_file(r.run_dir, kBestCheckpointFile))) continue;
    if (best == nullptr || r.metric > best->metric) best = &r;
  }
  return best;
}

// "accuracy 0.8800, macro_f1 0.8712": the figures of a split's JSON that a search compares.
std::string figures_text(const nlohmann::json& split) {
  std::vector<std::string> parts;
  for (const std::string& key : metric_keys(&MetricName::score)) {
    if (split.contains(key) && split[key].is_number())
      parts.push_back(fmt::format("{} {:.4f}", key, split[key].get<double>()));
  }
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ", "));
}

// What the search ends with on stdout: the winner, its test figures (the refit's, and
// the winning trial's alone beside them), and where its files are.
std::string ending_lines(const nlohmann::json& best, const std::string& metric,
                         const std::string& out) {
  std::string s =
      fmt::format("best: trial {}, validation {} {:.4f} ({})\n", best["trial"].get<int64_t>(),
                  metric, best["metric"].get<double>(),
                  values_text(best["values"].get<std::map<std::string, std::string>>()));
  const bool refit = best.contains("refit") && best["refit"]["status"] == "finished";
  if (best.contains("test") && !best["test"].is_null()) {
    s += fmt::format("test: {}{}", figures_text(best["test"]),
                     refit ? " (trained again on train + valid)" : " (the winning trial)");
    if (best.contains("trial_test") && !best["trial_test"].is_null())
      s += fmt::format("; the winning trial alone: {}", figures_text(best["trial_test"]));
    s += "\n";
  } else {
    s += "test: none (the config has no test split)\n";
  }
  if (best.contains("refit") && best["refit"]["status"] != "finished")
    s += fmt::format("not trained again on train + valid: {}\n",
                     best["refit"].value("reason", std::string("see tune.log")));
  s += fmt::format("model {}, config {}, page {}, log {}\n", best["model"].get<std::string>(),
                   run_file(out, kBestConfigFile), run_file(out, kTunePageFile),
                   run_file(out, kTuneLogFile));
  return s;
}

std::string summary_table(const std::vector<TrialRecord>& records, const TrialRecord* winner,
                          const std::string& metric) {
  std::string out = fmt::format("{:>5}  {:<8}  {:>8}  {:>6}  {:>7}  {}\n", "trial", "status",
                                metric.substr(0, 8), "epochs", "seconds", "values");
  for (const auto& r : records) {
    out += fmt::format("{:>5}  {:<8}  {:>8}  {:>6}  {:>7.1f}  {}{}\n", r.number,
                       to_string(r.status), r.has_metric ? fmt::format("{:.4f}", r.metric) : "-",
                       r.epochs, r.seconds, values_text(r.values), &r == winner ? "  <- best" : "");
  }
  return out;
}

std::string Search::trial_line(const TrialRecord& r) const {
  std::string s = fmt::format("trial {} {}: {} {}", r.number, to_string(r.status), o_.metric,
                              r.has_metric ? fmt::format("{:.4f}", r.metric) : "-");
  if (r.has_metric) s += fmt::format(" at epoch {} of {}", r.best_epoch, r.epochs);
  s += fmt::format(", {:.1f} s", r.seconds);
  if (!r.reason.empty()) s += " (" + r.reason + ")";
  const TrialRecord* best = best_record(records_, o_.max_model_bytes);
  if (best != nullptr)
    s += fmt::format("; best so far: trial {} ({:.4f})", best->number, best->metric);
  return s;
}

// Why no trial won, as the error the search ends with.
Error Search::no_winner() const {
  const bool any = std::any_of(records_.begin(), records_.end(),
                               [](const TrialRecord& r) { return r.has_metric; });
  if (any) {
    return Error(
        fmt::format("no trial fits --max-model-size {:.0f} bytes; allow more, or narrow "
                    "model.dim/model.buckets in the tune: section",
                    o_.max_model_bytes));
  }
  const auto failed = std::find_if(records_.begin(), records_.end(), [](const TrialRecord& r) {
    return r.status == TrialStatus::failed;
  });
  if (failed != records_.end()) {
    return Error(fmt::format("trial {} failed: {}", failed->number, last_error(failed->run_dir)));
  }
  return Error(
      fmt::format("the budget of {:.0f} s ended before any trial validated once (see "
                  "{}.log); give a longer --budget",
                  budget_, records_.empty() ? o_.out : records_.front().run_dir));
}

// The winner's summary: its settings (best.yaml), test figures and, after a refit, the
// refit's model and test figures with the trial's kept as trial_test.
nlohmann::json Search::winner_summary(const TrialRecord& winner) {
  SiftConfig best = config_with(winner.values);
  for (const auto& set : metric_overrides(o_.metric)) apply_override(best, set);
  best.run.name = config_name(o_) + "-tuned";
  write_file_atomically(run_file(o_.out, kBestConfigFile), dump_config(best));
  nlohmann::json b = {{"trial", winner.number},
                      {"metric", winner.metric},
                      {"values", winner.values},
                      {"run_dir", winner.run_dir},
                      {"model", winner.run_dir},
                      {"epochs", winner.epochs},
                      {"best_epoch", winner.best_epoch},
                      {"model_bytes", winner.model_bytes},
                      {"config", run_file(o_.out, kBestConfigFile)}};
  if (!base_.data.test.path.empty()) b["test"] = winner_test(program_, winner.run_dir, o_.out);
  if (o_.refit) {
    b["refit"] = refit(winner);
    if (b["refit"]["status"] == "finished") {
      b["model"] = b["refit"]["run_dir"];
      if (b.contains("test")) b["trial_test"] = b["test"];
      if (b["refit"].contains("test")) b["test"] = b["refit"]["test"];
    }
  }
  if (b.contains("test")) b["test_metric"] = metric_in(b["test"], o_.metric);
  return b;
}

nlohmann::json Search::finish() {
  const TrialRecord* winner = best_record(records_, o_.max_model_bytes);
  nlohmann::json summary = options_json(o_);
  summary["trials_run"] = records_.size();
  if (winner != nullptr) summary["best"] = winner_summary(*winner);
  summary["spent_seconds"] = spent_ + elapsed();
  write_file_atomically(run_file(o_.out, kTuneFile), summary.dump(2) + "\n");
  write_page(summary);
  if (winner == nullptr) throw no_winner();
  const std::string ending = ending_lines(summary["best"], o_.metric, o_.out);
  log(ending);
  if (o_.print_summary) std::cout << summary_table(records_, winner, o_.metric) << ending;
  return summary;
}

nlohmann::json Search::refit(const TrialRecord& winner) {
  const RefitPlan plan = plan_refit(base_, winner);
  const double deadline = budget_ - stop_margin(budget_) / 2;
  const double left = deadline - elapsed();
  const std::string dir = run_file(o_.out, kRefitFolder);
  nlohmann::json out = {{"run_dir", dir},
                        {"epochs", plan.epochs},
                        {"estimated_seconds", plan.seconds},
                        {"status", "skipped"}};
  std::string why = plan.why_not;
  if (why.empty() && plan.seconds > left) {
    why = fmt::format("it would take about {:.0f} s and {:.0f} s are left", plan.seconds, left);
  }
  if (!why.empty()) {
    out["reason"] = why;
    say("not trained again on train + valid: " + why);
    return out;
  }
  say(
      fmt::format("training trial {}'s settings again on train + valid for {} epochs (about "
                  "{:.0f} s)",
                  winner.number, plan.epochs, plan.seconds));
  fs::remove_all(dir);
  TrialProcess process(trial_argv(o_.out, kRefitFolder, winner.values, cores(), plan.overrides),
                       dir + ".log", "", "");
  while (process.running()) {
    if (elapsed() >= deadline) process.signal(SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  out["seconds"] = process.seconds();
  const std::string report = run_file(dir, kReportJsonFile);
  if (process.exit_code() != 0 || !fs::exists(report)) {
    out["status"] = "failed";
    out["reason"] = elapsed() >= deadline
                        ? "stopped at the end of the budget"
                        : fmt::format("exit code {}: {}", process.exit_code(), last_error(dir));
    say("training again failed (" + out["reason"].get<std::string>() +
        "): the trial stays the winner");
    return out;
  }
  out["status"] = "finished";
  if (nlohmann::json test = report_test(dir); !test.is_null()) out["test"] = test;
  return out;
}

}  // namespace

void TuneOptions::validate() const {
  if (budget_seconds < 10) {
    throw Error(
        fmt::format("--budget: {:.0f} s is shorter than one trial's start-up; give at "
                    "least 10s (a few minutes lets a search try enough settings)",
                    budget_seconds));
  }
  if (parallel < 1) throw Error("--parallel: give at least 1");
  if (trials < 0) throw Error("--trials: give 0 (no limit) or more");
  if (eta < 2) throw Error("--eta: give at least 2");
  const std::vector<std::string> metrics = metric_keys(&MetricName::score);
  if (std::find(metrics.begin(), metrics.end(), metric) == metrics.end() &&
      metric_label(metric).empty()) {
    throw Error(fmt::format("--metric: expected {} or f1:LABEL, not '{}'", fmt::join(metrics, ", "),
                            metric));
  }
}

std::string metric_label(const std::string& metric) {
  if (metric.rfind("f1:", 0) != 0) return "";
  const std::string label = metric.substr(3);
  const std::string prefix = "__label__";
  return label.rfind(prefix, 0) == 0 ? label.substr(prefix.size()) : label;
}

}  // namespace sift

namespace sift {
namespace {

// Whether the config gives validation data; the search has nothing to go on without.
void check_validation_data(const SiftConfig& base) {
  if (!base.data.valid.path.empty() || base.data.valid_split > 0) return;
  throw Error(
      "sift tune needs validation data: set data.valid.path, or data.valid_split "
      "(e.g. --set data.valid_split=0.1) to hold out part of the training data");
}

std::string default_out(const TuneOptions& o, const SiftConfig& base) {
  const std::string name = base.run.name.empty() ? config_name(o) : base.run.name;
  return (fs::path(base.run.dir) / (name + "-tune")).string();
}

}  // namespace

nlohmann::json tune(const TuneOptions& given, const std::vector<ModelTraits>& models,
                    const std::string& program) {
  given.validate();
  TuneOptions o = given;
  // fastText's spelling f1:__label__X is f1:X here: the label as labels.txt holds it.
  if (!metric_label(o.metric).empty()) o.metric = "f1:" + metric_label(o.metric);
  const SiftConfig base = load_config(o.config, o.overrides, models);
  check_validation_data(base);
  if (metric_label(o.metric).empty() && metric_named(o.metric).multi_label_only &&
      !base.data.multi_label) {
    throw Error(fmt::format(
        "--metric {} is for multi-label runs (single-label micro-F1 is accuracy)", o.metric));
  }
  if (o.out.empty()) o.out = default_out(o, base);
  if (fs::exists(o.out) && !fs::is_empty(o.out)) {
    throw Error(
        fmt::format("{} is not empty: go on with `sift tune --resume {}`, or choose "
                    "another --out",
                    o.out, o.out));
  }
  return Search(o, models, program, {}, 0.0).run(o.budget_seconds);
}

nlohmann::json resume_tune(const std::string& dir, double budget_seconds, int64_t trials_limit,
                           const std::vector<ModelTraits>& models, const std::string& program,
                           bool quiet, bool print_summary, const std::atomic<int>* stop_signal) {
  check_own_folder(dir, "--resume");
  const std::string state_path = run_file(dir, kTuneFile);
  std::ifstream in(state_path);
  if (!in) throw Error(fmt::format("{}: not a sift tune folder (no {})", dir, kTuneFile));
  const auto state = nlohmann::json::parse(in, nullptr, false);
  if (!state.is_object() || !state.contains("config"))
    throw Error(fmt::format("{}: unreadable", state_path));
  TuneOptions o = options_from_json(state, dir);
  o.stop_signal = stop_signal;
  if (trials_limit >= 0) o.trials = trials_limit;
  o.quiet = quiet;
  o.print_summary = print_summary;
  const std::string trials = run_file(dir, kTrialsFile);
  std::vector<TrialRecord> done =
      fs::exists(trials) ? read_trials_csv(trials) : std::vector<TrialRecord>{};
  const double spent = state.value("spent_seconds", 0.0);
  const double budget = budget_seconds > 0 ? budget_seconds : o.budget_seconds - spent;
  if (budget < 10) {
    throw Error(
        fmt::format("{}: the search's budget is spent ({:.0f} of {:.0f} s); give --budget "
                    "to go on",
                    dir, spent, o.budget_seconds));
  }
  const auto finished = std::count_if(done.begin(), done.end(), [](const TrialRecord& r) {
    return r.status != TrialStatus::interrupted;
  });
  if (o.trials > 0 && finished >= o.trials) {
    throw Error(fmt::format("{}: all {} trials are done; give --trials to go on", dir, o.trials));
  }
  return Search(o, models, program, std::move(done), spent).run(budget);
}

namespace {

// A positive number with an optional unit from `units` (unit -> scale; "" for none).
double parse_quantity(const std::string& text, const std::map<std::string, double>& units,
                      const std::string& what) {
  size_t used = 0;
  double v = -1;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
  }
  const auto unit = units.find(text.substr(std::min(used, text.size())));
  if (v <= 0 || unit == units.end()) throw Error(fmt::format("{}, not '{}'", what, text));
  return v * unit->second;
}

}  // namespace

double parse_duration(const std::string& text) {
  return parse_quantity(text, {{"", 1}, {"s", 1}, {"m", 60}, {"h", 3600}},
                        "--budget: expected a duration such as 90s, 10m or 1h");
}

double parse_size(const std::string& text) {
  return parse_quantity(text,
                        {{"", 1},
                         {"B", 1},
                         {"K", 1e3},
                         {"KB", 1e3},
                         {"M", 1e6},
                         {"MB", 1e6},
                         {"G", 1e9},
                         {"GB", 1e9}},
                        "--max-model-size: expected a size such as 500K, 2M or 1G");
}

}  // namespace sift
