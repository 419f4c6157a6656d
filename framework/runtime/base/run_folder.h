// The run folder: the one place that names its files and makes new ones. A training run
// writes them; eval, predict, export and resumed training read them back.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "config/config.h"

namespace sift {

inline constexpr const char* kConfigFile = "config.yaml";  // the full config, resolved
inline constexpr const char* kLabelsFile = "labels.txt";   // one label per line, in id order
inline constexpr const char* kVocabFile = "vocab.txt";     // Vocab::save
// The SentencePiece model, or the WordPiece vocab.txt (tokenizer.type sentencepiece/wordpiece).
inline constexpr const char* kTokenizerModelFile = "tokenizer.model";
inline constexpr const char* kStopwordsFile = "stopwords.txt";  // when tokenizer.stopwords is set
inline constexpr const char* kMetricsFile = "metrics.jsonl";    // one JSON line per evaluation
// Every train.log_every steps and every validation, Lightning's CSVLogger layout (step_log.h).
inline constexpr const char* kStepLogFile = "metrics.csv";
// Every log line of training, timestamped (a resume appends).
inline constexpr const char* kTrainLogFile = "train.log";
// One JSON line per restart by `sift launch --max-restarts` (restarts.h): when, why, and the
// step it resumed from.
inline constexpr const char* kRestartsFile = "restarts.jsonl";
// train.tensorboard: a folder of TensorBoard event files (tensorboard.h).
inline constexpr const char* kTensorBoardFolder = "tb";
// train.profile: the profiler's Chrome trace of the steps it recorded (profiler.h).
inline constexpr const char* kProfileFolder = "profile";
inline constexpr const char* kProfileTraceFile = "trace.json";
inline constexpr const char* kBestCheckpointFile = "best.ckpt";  // may name last.ckpt's weights
inline constexpr const char* kLastCheckpointFile = "last.ckpt";  // the state to resume from
inline constexpr const char* kReportJsonFile = "report.json";
inline constexpr const char* kReportTextFile = "report.txt";
inline constexpr const char* kReportHtmlFile = "report.html";   // report_html.h
inline constexpr const char* kCrossValidationFile = "cv.json";  // `sift cv`, in its own folder
// `sift tune`'s folder: its options and summary, one row per trial, the winning config,
// and the trials' run folders (trial-NNN) with their logs (trial-NNN.log).
inline constexpr const char* kTuneFile = "tune.json";
// Every line of the search (trials started, each validation, ends, the refit), timed.
inline constexpr const char* kTuneLogFile = "tune.log";
inline constexpr const char* kTrialsFile = "trials.csv";
inline constexpr const char* kBestConfigFile = "best.yaml";
inline constexpr const char* kTrialsFolder = "trials";
// The winner trained again on train + valid (tools/tune/refit.h), and the search's page.
inline constexpr const char* kRefitFolder = "refit";
inline constexpr const char* kTunePageFile = "tune.html";
// flock'ed by the one process that writes the folder (train, resume, export into it);
// holds that process's pid for the message the next one gets.
inline constexpr const char* kLockFile = "run.lock";

// Whether `name` is one of the files above (what `export --out` must never replace).
bool is_run_folder_file(const std::string& name);

// An exclusive advisory lock (flock) on run_dir/run.lock, held until destroyed. Taking
// it fails at once, with a sift::Error naming the folder and the holder's pid, while
// another process holds it.
class RunFolderLock {
 public:
  explicit RunFolderLock(const std::string& run_dir);
  ~RunFolderLock();
  RunFolderLock(const RunFolderLock&) = delete;
  RunFolderLock& operator=(const RunFolderLock&) = delete;

 private:
  int fd_ = -1;
};

// What each checkpoint records of the run's text files, so that a folder whose files no
// longer match its weights is refused instead of predicting with the wrong labels
// (swapping two lines of labels.txt turned accuracy 0.997 into 0.003 with exit 0):
// CRC-32s of labels.txt and vocab.txt, and of config.yaml's options that fix the model's
// shape and inputs (model.*, tokenizer.*, data.labels, data.multi_label: what a resume may
// not change with --set, so a resume that changes train.epochs keeps its checkpoints).
nlohmann::json run_file_hashes(const std::string& run_dir);
// Compares them with `meta`'s (written by run_file_hashes into meta["run_files"]); a
// checkpoint without them (written before) is not checked. sift::Error naming the file
// that changed and `checkpoint_path`.
void check_run_file_hashes(const std::string& run_dir, const nlohmann::json& meta,
                           const std::string& checkpoint_path);

// `name` inside `run_dir`.
std::string run_file(const std::string& run_dir, const std::string& name);

// "<config file stem>-YYYYmmdd-HHMMSS" in local time ("run-..." without a config file).
std::string default_run_name(const SiftConfig& config);

// Creates run.dir/run.name (run.name empty: default_run_name) with its parents, locks it
// into `lock` and returns its path. A folder that is not empty is refused unless
// run.overwrite, which swaps in a fresh folder in one rename (renameat2 RENAME_EXCHANGE)
// and then deletes the old one: a kill at any moment leaves the old run whole or a new
// one, never old checkpoints beside new labels. sift::Error naming the folder.
std::string create_run_folder(const SiftConfig& config, std::unique_ptr<RunFolderLock>& lock);

}  // namespace sift
