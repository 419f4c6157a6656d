// The run folder: the one place that names its files and makes new ones. A training run
// writes them; eval, predict, export and resumed training read them back.
#pragma once

#include <string>

#include "config/config.h"

namespace sift {

inline constexpr const char* kConfigFile = "config.yaml";  // the full config, resolved
inline constexpr const char* kLabelsFile = "labels.txt";   // one label per line, in id order
inline constexpr const char* kVocabFile = "vocab.txt";     // Vocab::save
inline constexpr const char* kTokenizerModelFile = "tokenizer.model";  // sentencepiece only
inline constexpr const char* kStopwordsFile = "stopwords.txt";   // when tokenizer.stopwords is set
inline constexpr const char* kMetricsFile = "metrics.jsonl";     // one JSON line per evaluation
inline constexpr const char* kBestCheckpointFile = "best.ckpt";  // may name last.ckpt's weights
inline constexpr const char* kLastCheckpointFile = "last.ckpt";  // the state to resume from
inline constexpr const char* kReportJsonFile = "report.json";
inline constexpr const char* kReportTextFile = "report.txt";
inline constexpr const char* kCrossValidationFile = "cv.json";  // `sift cv`, in its own folder

// `name` inside `run_dir`.
std::string run_file(const std::string& run_dir, const std::string& name);

// "<config file stem>-YYYYmmdd-HHMMSS" in local time ("run-..." without a config file).
std::string default_run_name(const SiftConfig& config);

// Creates run.dir/run.name (run.name empty: default_run_name) with its parents; returns
// its path. sift::Error naming run.dir when it cannot be created.
std::string create_run_folder(const SiftConfig& config);

}  // namespace sift
