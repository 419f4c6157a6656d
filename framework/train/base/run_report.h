// What a training run says of itself, alike in sift-main's trainer (trainer.h) and
// sift-lite's (lite_trainer.h): report.json's "environment", the log lines of its ending
// and of an epoch end that does not save, and the message of a stop by signal.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "framework/train/base/train_options.h"

namespace sift {

// Where the run ran: the program, LibTorch's version (or why none), the device and the
// compute threads; the host, the time it finished and the variables the launcher sets.
struct RunPlace {
  std::string program;   // "sift-main" or "sift-lite"
  std::string libtorch;  // its version, or "not loaded"
  std::string device;
  int64_t threads = 1;
  int64_t world_size = 1;
  int64_t data_workers = 1;
  std::string config_file;  // the run's config.yaml: its CRC-32 is the config hash
};
// report.json's "environment": where the run ran, and its provenance (Sift version, git
// commit, command line, host, start time, config hash).
nlohmann::json run_environment(const RunPlace& place);

// "last.ckpt: not saved at this epoch's end: ..." (train.save_last: auto's first skip).
std::string unsaved_epoch_end(double save_seconds, double trained_seconds);

// The log lines after the last epoch: an early stop, skipped non-finite batches.
std::vector<std::string> ending_lines(const TrainConfig& t, bool stopped_early,
                                      int64_t skipped_batches);

// Writes the run's reports into `dir`: report.json, report.txt (`text`, then the records
// trained with an empty text, where the time went and `extra`) and report.html.
void write_reports(const std::string& dir, const nlohmann::json& report, std::string text,
                   const std::string& extra = "");

// The stop a signal asked for, after last.ckpt was saved at `step` of `epoch`.
Interrupted interrupted_at(int signal_number, int64_t step, int64_t epoch,
                           const std::string& run_dir);

// A data error (a shard changed or gone, a bad record) that stopped training after
// last.ckpt was saved where the run stood, as a SIGTERM saves: `what` and how to go on
// once the data is fixed. `saved` false: the step could not be saved (inside an
// accumulation, or Hogwild threads), and the message says what was.
Error data_error_at(const std::string& what, bool saved, int64_t step, int64_t epoch,
                    const std::string& run_dir);

}  // namespace sift
