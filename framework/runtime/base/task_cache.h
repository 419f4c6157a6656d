// The vocabulary pass kept between runs (issue #46). Counting the training data reads all
// of it once before the first epoch, as fastText does: on 1M synthetic lines it was about a
// fifth of the run's CPU (VocabBuilder::add alone 10%, plus a second parse and tokenization
// of every line). A run of the same training files and data options (`sift tune`'s trials,
// `sift cv`'s reruns, a run started again) reads the count back instead.
//
// The cache is a folder of JSON files, one per count, each holding the exact identity it
// answers (the data options and each training file's path, size, modification time and
// inode), so a changed file or option is a miss, never a wrong vocabulary. Writes are
// atomic; at most kTaskCacheEntries files are kept, the oldest removed first.
#pragma once

#include <optional>
#include <string>

#include "framework/runtime/base/task.h"

namespace sift {

inline constexpr int kTaskCacheEntries = 32;

// The counted task as text, and back (also how rank 0 shares its count with the others).
std::string task_bytes(const Task& task);
Task task_from_bytes(const DataPlan& plan, const std::string& bytes);

// SIFT_CACHE_DIR when set (empty or "off": no cache), else $XDG_CACHE_HOME/sift, else
// $HOME/.cache/sift; empty: off.
std::string task_cache_dir();

// What the count of `plan`'s training data depends on: the program's version, the data
// options (DataPlan::options_identity) and every training file's identity. Empty when
// the count is not cached: subword tokenizers, a vocabulary kept from train.init_from.
std::string task_identity(const DataPlan& plan);

// The task counted before for `identity`, or nothing (no such entry, another identity, an
// unreadable entry).
std::optional<Task> load_cached_task(const DataPlan& plan, const std::string& identity);

// Keeps `task` for `identity` (best effort: a cache that cannot be written is skipped; the
// run does not depend on it). Returns whether it was written.
bool store_cached_task(const Task& task, const std::string& identity);

}  // namespace sift
