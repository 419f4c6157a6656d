// `sift tune`: a hyperparameter search within a wall-time budget. Trials are ordinary
// training runs (RUN/trials/trial-NNN), up to `parallel` at once, each with its share of
// the cores; asynchronous successive halving (ASHA, Li et al. 2018) stops a trial whose
// validation metric at a rung epoch (eta, eta^2, ...) is outside the best 1/eta of the
// trials that reached that rung; the sampler (sampler.h) draws new trials around the best.
#pragma once

#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/model_traits.h"

namespace sift {

struct TuneOptions {
  std::string config;                  // the base config file (its `tune:` section included)
  std::vector<std::string> overrides;  // --set KEY=VALUE on the base config
  std::string out;                     // the search folder; "": RUN.dir/<name>-tune
  double budget_seconds = 0.0;         // wall time of the whole search
  std::string metric = "accuracy";     // accuracy | macro_f1 | micro_f1 | f1:LABEL
  int64_t trials = 0;                  // most trials; 0: as many as the budget allows
  int64_t parallel = 1;                // trials at once
  double max_model_bytes = 0.0;        // winners must fit (int8 export estimate); 0: any
  uint64_t seed = 1;                   // the sampler's seed
  int64_t eta = 3;                     // ASHA: keep the best 1/eta at each rung
  bool quiet = false;                  // no progress lines on stderr (tune.log has them)
  bool print_summary = true;           // the trials table and the winner on stdout
  bool refit = true;                   // train the winner again on train + valid (refit.h)
  // Set (to the signal's number) by the command's SIGINT/SIGTERM handler: the running
  // trials are stopped (they save, as `sift train` does), recorded as interrupted, and the
  // search throws sift::Interrupted with the command that goes on. Null: never.
  const std::atomic<int>* stop_signal = nullptr;

  // Checks the fields alone; each error names its flag.
  void validate() const;
};

// Runs a new search; `program` is the sift executable the trials run. Returns the
// summary also written to OUT/tune.json.
nlohmann::json tune(const TuneOptions& options, const std::vector<ModelTraits>& models,
                    const std::string& program);

// Goes on with the search in `dir` after an interruption: finished trials are kept,
// interrupted ones continue from their last.ckpt (`sift train --resume`), a trial folder
// that no record holds is made again unless a process still holds its run.lock;
// `budget_seconds` > 0 replaces what was left of the budget and `trials` >= 0 the most
// trials; `quiet` and `print_summary` as in TuneOptions.
nlohmann::json resume_tune(const std::string& dir, double budget_seconds, int64_t trials,
                           const std::vector<ModelTraits>& models, const std::string& program,
                           bool quiet = false, bool print_summary = true,
                           const std::atomic<int>* stop_signal = nullptr);

// The label of --metric f1:LABEL (a __label__ prefix taken off, as fastText's
// -autotune-metric f1:__label__X reads); "" for the other metrics.
std::string metric_label(const std::string& metric);

// "10m", "90s", "1h", "300" (seconds) -> seconds; throws naming --budget.
double parse_duration(const std::string& text);
// "2M", "500K", "1G", "123456" (bytes) -> bytes; throws naming --max-model-size.
double parse_size(const std::string& text);

}  // namespace sift
