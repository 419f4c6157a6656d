// Restarts by `sift launch --max-restarts N`: the agent restarts every rank after one
// fails, telling them in the environment which restart this is and why (SIFT_RESTART,
// SIFT_MAX_RESTARTS, SIFT_RESTART_REASON, SIFT_RESTART_TIME). A restarted `sift train
// cfg.yaml` continues run.dir/run.name from its last.ckpt; rank 0 appends the restart to
// the run folder's restarts.jsonl, says it in train.log, and report.json's
// train.restarts lists them all.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "config/config.h"
#include "framework/train/base/learner.h"

namespace sift {

struct Restart {
  int64_t attempt = 0;       // 0: the first start; 1..max_restarts: a restart
  int64_t max_restarts = 0;  // sift launch --max-restarts
  std::string reason;        // what failed, as the agent saw it
  std::string failed_at;     // when the agent saw it (UTC, ISO 8601)
};

// The launch's restart variables; nothing when SIFT_RESTART is unset. A malformed value
// is a sift::Error naming it.
std::optional<Restart> restart_from_environment();

// The run folder a restart continues: run.dir/run.name. An empty run.name is refused
// under --max-restarts (a timestamped name would differ at each start).
std::string restart_run_folder(const SiftConfig& config);

// Appends the restart and the step it resumed from to RUN/restarts.jsonl.
void record_restart(const std::string& run_dir, const Restart& restart, int64_t resumed_from_step);

// RUN/restarts.jsonl's entries, in order (an empty array without the file).
nlohmann::json read_restarts(const std::string& run_dir);

// Rank 0's observer of a restarted run: the train.log line of this restart at the start,
// and report.json's train.restarts at the end.
class RestartNote : public LoopObserver {
 public:
  RestartNote(std::string run_dir, int64_t attempt)
      : run_dir_(std::move(run_dir)), attempt_(attempt) {}
  void start(Progress& progress) override;
  void add_summary(nlohmann::json& train, Progress& progress) override;

 private:
  std::string run_dir_;
  int64_t attempt_;
};

}  // namespace sift
