// The training loop, written once for every learner (learner.h): the epochs and their
// steps, periodic and epoch-end saves of last.ckpt, validation with the best weights
// (best.ckpt) and early stopping, the final evaluation of the best weights, and the
// reports. sift-main runs it over its LibTorch model (trainer.cc), sift-lite over the
// fastText tables (lite_trainer.cc). No LibTorch.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "framework/runtime/base/data_plan.h"
#include "framework/runtime/base/evaluation_result.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/runtime/base/task.h"
#include "framework/train/base/learner.h"
#include "framework/train/base/phases.h"
#include "framework/train/base/run_plan.h"
#include "framework/train/base/step_log.h"
#include "framework/train/base/train_options.h"
#include "framework/train/base/training_state.h"

namespace sift {

// What one run holds besides its learner, whichever program trains it (sift-main's Run,
// run.h, is one).
struct RunCore {
  RunCore() = default;
  RunCore(const RunCore&) = delete;
  RunCore& operator=(const RunCore&) = delete;

  RunPlan plan;  // the run's options, resolved once at its start (run_plan.h)
  TrainOptions options;
  std::string dir;
  std::unique_ptr<RunFolderLock> lock;  // rank 0's, on the run folder it writes
  nlohmann::json file_hashes;           // run_file_hashes, recorded in every checkpoint (rank 0)
  std::vector<std::string> data_changed_on_resume;  // keys --allow-data-change let through
  Task task;
  TrainingState state;
  BestState best;
  PhaseTimes phases;  // where the time went (report.json's "phases")
  StepLog step_log;   // metrics.csv (rank 0 writes)
};

// Trains `learner` on `encoder`'s batches from where `run` stands (`data_state`: last.ckpt's
// mid-epoch data position, or "") and evaluates its best weights; writes report.json, report.txt
// and report.html (rank 0) and returns the report.
nlohmann::json train_and_report(RunCore& run, Learner& learner, const TextEncoder& encoder,
                                const std::string& data_state,
                                const std::vector<LoopObserver*>& observers = {});

// Writes best.ckpt from the best weights unless it holds them (`same_as_last`: a hard link
// of last.ckpt instead); a resume repairs best.ckpt with it (saving.h).
void save_best(RunCore& run, Learner& learner, bool same_as_last);

// Writes the best weights (in the model or the learner's copy) to best.ckpt and drops the
// copy: restore_best reads them back from there.
void write_best_out(RunCore& run, Learner& learner);
// train.patience validations in a row without improvement.
bool stop_early(const RunCore& run);

}  // namespace sift
