#include "framework/train/base/restarts.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/append_line.h"
#include "core/error.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/train/base/progress.h"

namespace sift {
namespace {

std::string env_text(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

int64_t env_count(const char* name) {
  const std::string v = env_text(name);
  char* end = nullptr;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || x < 0) {
    throw Error(
        fmt::format("environment variable {}='{}' is not a whole number >= 0 (it is set "
                    "by sift launch)",
                    name, v));
  }
  return x;
}

}  // namespace

std::optional<Restart> restart_from_environment() {
  if (env_text("SIFT_RESTART").empty()) return std::nullopt;
  Restart r;
  r.attempt = env_count("SIFT_RESTART");
  r.max_restarts = env_count("SIFT_MAX_RESTARTS");
  r.reason = env_text("SIFT_RESTART_REASON");
  r.failed_at = env_text("SIFT_RESTART_TIME");
  return r;
}

std::string restart_run_folder(const SiftConfig& config) {
  if (config.run.name.empty()) {
    throw Error(
        "run.name: sift launch --max-restarts needs a fixed run folder name, so that a restart "
        "finds the run it continues (the default adds the start's time): set run.name");
  }
  return (std::filesystem::path(config.run.dir) / config.run.name).string();
}

void record_restart(const std::string& run_dir, const Restart& restart, int64_t resumed_from_step) {
  const nlohmann::json entry{{"restart", restart.attempt},
                             {"max_restarts", restart.max_restarts},
                             {"failed_at", restart.failed_at},
                             {"reason", restart.reason},
                             {"resumed_from_step", resumed_from_step}};
  append_line(run_file(run_dir, kRestartsFile), entry.dump());
}

nlohmann::json read_restarts(const std::string& run_dir) {
  nlohmann::json out = nlohmann::json::array();
  std::ifstream in(run_file(run_dir, kRestartsFile));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

void RestartNote::start(Progress& progress) {
  const nlohmann::json all = read_restarts(run_dir_);
  if (attempt_ == 0 || all.empty()) return;
  const nlohmann::json& e = all.back();
  progress.log(
      fmt::format("restart {} of at most {} (sift launch --max-restarts): {} at {}; "
                  "resumed from step {}",
                  e.value("restart", int64_t{0}), e.value("max_restarts", int64_t{0}),
                  e.value("reason", std::string("?")), e.value("failed_at", std::string("?")),
                  e.value("resumed_from_step", int64_t{0})));
}

void RestartNote::add_summary(nlohmann::json& train, Progress& /*progress*/) {
  train["restarts"] = read_restarts(run_dir_);
}

}  // namespace sift
