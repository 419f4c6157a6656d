// What `sift tune` keeps of each trial, and trials.csv, the one file that holds them:
// written whole through a temporary name after every trial ends, read back by --resume.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sift {

// Why a trial ended. interrupted: `sift tune` was stopped (SIGTERM/SIGINT) while it ran; it
// saved its last.ckpt, and `sift tune --resume` continues it from there.
enum class TrialStatus { finished, pruned, budget, failed, interrupted };
std::string to_string(TrialStatus status);
// Every status's name, in TrialStatus order.
const std::vector<std::string>& trial_status_names();

struct TrialRecord {
  int64_t number = 0;
  std::map<std::string, std::string> values;  // tuned key -> YAML text
  TrialStatus status = TrialStatus::finished;
  bool has_metric = false;  // at least one validation ran
  double metric = 0.0;      // the best validation value of the tuned metric
  int64_t epochs = 0;       // epochs validated
  int64_t best_epoch = 0;   // the epoch of `metric` (what a refit trains for)
  double seconds = 0.0;
  double started = 0.0;      // seconds from the search's start (earlier sessions included)
  double model_bytes = 0.0;  // int8 export estimate; 0: unknown
  std::string reason;        // why it stopped, in words
  std::string run_dir;
};

// Columns: trial, status, metric, epochs, best_epoch, seconds, started, model_bytes, one per key,
// reason, run_dir; fields with a comma, quote or newline are quoted as in RFC 4180.
void write_trials_csv(const std::string& path, const std::vector<TrialRecord>& records,
                      const std::vector<std::string>& keys);
// The records of a trials.csv written by write_trials_csv; throws naming path:line.
std::vector<TrialRecord> read_trials_csv(const std::string& path);

}  // namespace sift
