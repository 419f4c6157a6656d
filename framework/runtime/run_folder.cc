#include "framework/runtime/run_folder.h"

#include <fmt/format.h>

#include <ctime>
#include <filesystem>

#include "core/error.h"

namespace sift {

namespace fs = std::filesystem;

std::string run_file(const std::string& run_dir, const std::string& name) {
  return (fs::path(run_dir) / name).string();
}

std::string default_run_name(const SiftConfig& config) {
  const std::string stem = config.source.empty() ? "run" : fs::path(config.source).stem().string();
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", std::localtime(&now));
  return stem + "-" + stamp;
}

std::string create_run_folder(const SiftConfig& config) {
  const fs::path dir =
      fs::path(config.run.dir) /
      (config.run.name.empty() ? default_run_name(config) : config.run.name);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("run.dir: cannot create {}: {}", dir.string(), ec.message()));
  return dir.string();
}

}  // namespace sift
