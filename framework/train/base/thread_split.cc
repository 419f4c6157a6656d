#include "framework/train/base/thread_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "config/loader.h"
#include "framework/train/base/fast_path_rules.h"

namespace sift {

std::optional<ThreadSplit> split_cores(const SiftConfig& config, int64_t cores) {
  if (config.run.threads != 0 || !is_set(config, "run.threads")) return std::nullopt;
  if (!fast_path_refusal(config.train, fast_path_case(config)).empty()) return std::nullopt;
  cores = std::max<int64_t>(1, cores);
  const bool trainers_given = is_set(config, "train.fast_path_threads");
  const bool readers_given = is_set(config, "data.workers");
  ThreadSplit s;
  s.trainers = trainers_given ? config.train.fast_path_threads : std::max<int64_t>(1, cores / 2);
  // Hogwild threads validate at epoch ends only (config/validate.cc): eval_every keeps one.
  if ((cores < 4 || config.train.eval_every > 0) && !trainers_given) s.trainers = 1;
  if (s.trainers > 1) {
    s.readers = s.trainers;  // each Hogwild trainer reads for itself
  } else {
    s.readers = readers_given ? config.data.workers : std::max<int64_t>(1, cores - 1);
  }
  const int64_t threads = s.trainers > 1 ? 2 * s.trainers : s.trainers + s.readers;
  s.line = fmt::format(
      "run.threads 0: {} cores = {} trainer{}{} + {} reader{}{}{}", cores, s.trainers,
      s.trainers == 1 ? "" : "s", trainers_given ? " (train.fast_path_threads)" : "", s.readers,
      s.readers == 1 ? "" : "s", readers_given && s.trainers == 1 ? " (data.workers)" : "",
      threads == cores ? "" : fmt::format(", {} threads in all", threads));
  return s;
}

std::string apply_core_split(SiftConfig& config) {
  const auto s = split_cores(config, static_cast<int64_t>(std::thread::hardware_concurrency()));
  if (!s) return "";
  const char* origin = "run.threads 0";
  if (!is_set(config, "train.fast_path_threads")) config.origin["train.fast_path_threads"] = origin;
  if (!is_set(config, "data.workers")) config.origin["data.workers"] = origin;
  config.train.fast_path_threads = s->trainers;
  if (s->trainers == 1) config.data.workers = s->readers;  // Hogwild's readers are its own
  return s->line;
}

}  // namespace sift
