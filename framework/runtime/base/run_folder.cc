#include "framework/runtime/base/run_folder.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <vector>

#include "config/loader.h"
#include "config/options.h"
#include "core/crc32.h"
#include "core/error.h"
#include "core/file_bytes.h"
#include "core/open_for_writing.h"

namespace sift {

namespace fs = std::filesystem;

std::string run_file(const std::string& run_dir, const std::string& name) {
  return (fs::path(run_dir) / name).string();
}

bool is_run_folder_file(const std::string& name) {
  for (const char* f :
       {kConfigFile, kLabelsFile, kVocabFile, kTokenizerModelFile, kStopwordsFile, kMetricsFile,
        kStepLogFile, kTrainLogFile, kRestartsFile, kBestCheckpointFile, kLastCheckpointFile,
        kReportJsonFile, kReportTextFile, kReportHtmlFile, kCrossValidationFile, kLockFile}) {
    if (name == f) return true;
  }
  return false;
}

RunFolderLock::RunFolderLock(const std::string& run_dir) {
  // Whoever writes a run folder locks it first: a folder that is a symlink is refused here.
  check_own_folder(run_dir, "run folder");
  const std::string path = run_file(run_dir, kLockFile);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) throw Error(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    char pid[32] = {};
    const ssize_t n = ::pread(fd_, pid, sizeof(pid) - 1, 0);
    ::close(fd_);
    fd_ = -1;
    if (e != EWOULDBLOCK) throw Error(fmt::format("cannot lock {}: {}", path, std::strerror(e)));
    std::string holder(pid, n > 0 ? static_cast<size_t>(n) : 0);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    throw Error(
        fmt::format("{} is in use by process {} (it holds {}): wait for it to end, or "
                    "use another run folder",
                    run_dir, holder.empty() ? "?" : holder, path));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    // The lock holds without the pid; only the message of a second process loses it.
  }
}

RunFolderLock::~RunFolderLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

namespace {

// Options added after checkpoints began to record this hash: they join it only when set
// off their default, so that every run saved before them keeps its hash and still loads.
bool added_later(const std::string& key) {
  return key == "model.token_types" || key == "model.embedding_dim" ||
         key == "model.layer_norm_eps" || key == "model.head_activation" || key == "model.minn" ||
         key == "model.maxn" || key == "model.pre_norm" || key == "model.ff_activation" ||
         key == "model.layer_repeats" || key == "model.position_offset" ||
         key == "tokenizer.piece_ids";
}

// The config's options that fix the model: name=value lines.
std::string model_defining_options(const SiftConfig& config) {
  static const SiftConfig defaults;
  std::string out;
  for (const auto& option : all_options()) {
    const std::string& key = option.name;
    if (key.rfind("model.", 0) != 0 && key.rfind("tokenizer.", 0) != 0 && key != "data.labels" &&
        key != "data.multi_label") {
      continue;
    }
    const std::string value = emitted(option, config);
    if (added_later(key) && value == emitted(option, defaults)) continue;
    out += key + "=" + value + "\n";
  }
  return out;
}

}  // namespace

nlohmann::json run_file_hashes(const std::string& run_dir) {
  const std::string config_path = run_file(run_dir, kConfigFile);
  if (read_file_bytes(config_path).find_first_not_of(" \t\r\n") == std::string::npos) {
    throw Error(fmt::format("{} is empty", config_path));
  }
  const SiftConfig config = load_config(config_path);
  return {{kConfigFile, crc32_of(model_defining_options(config))},
          {kLabelsFile, crc32_of(read_file_bytes(run_file(run_dir, kLabelsFile)))},
          {kVocabFile, crc32_of(read_file_bytes(run_file(run_dir, kVocabFile)))}};
}

void check_run_file_hashes(const std::string& run_dir, const nlohmann::json& meta,
                           const std::string& checkpoint_path) {
  if (!meta.contains("run_files")) return;  // written before checkpoints recorded them
  const nlohmann::json now = run_file_hashes(run_dir);
  const nlohmann::json& then = meta.at("run_files");
  for (const char* file : {kConfigFile, kLabelsFile, kVocabFile}) {
    if (then.contains(file) && then.at(file) != now.at(file)) {
      throw Error(fmt::format("{} changed since {} was written{}: the weights no longer match it",
                              run_file(run_dir, file), checkpoint_path,
                              file == std::string(kConfigFile)
                                  ? " (its model.*, tokenizer.* or data.labels settings)"
                                  : ""));
    }
  }
}

std::string default_run_name(const SiftConfig& config) {
  const std::string stem = config.source.empty() ? "run" : fs::path(config.source).stem().string();
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", std::localtime(&now));
  return stem + "-" + stamp;
}

namespace {

// Empty but for a lock file left by an earlier process.
bool is_empty_run_folder(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename() != kLockFile) return false;
  }
  return true;
}

// The entries of run folder `dir` that Sift did not write (a run's files, its tb/ and
// profile/ folders, a temporary name of an interrupted write), sorted: what --overwrite
// would delete of the user's (issue #42: it deleted them without a word).
std::vector<std::string> foreign_files(const fs::path& dir) {
  std::vector<std::string> foreign;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const size_t tmp = name.find(".tmp-");
    if (is_run_folder_file(tmp == std::string::npos ? name : name.substr(0, tmp))) continue;
    if ((name == kTensorBoardFolder || name == kProfileFolder) && entry.is_directory()) continue;
    foreign.push_back(name);
  }
  std::sort(foreign.begin(), foreign.end());
  return foreign;
}

// Replaces the non-empty folder `dir` by a fresh one, locked into `lock`: the fresh one is
// made beside it and the two names are exchanged in one rename, then the old is deleted.
void replace_run_folder(const fs::path& dir, std::unique_ptr<RunFolderLock>& lock) {
  const RunFolderLock old_lock(dir.string());  // refuses a folder another process writes
  const fs::path fresh =
      dir.parent_path() / fmt::format(".{}.replacing-{}", dir.filename().string(), ::getpid());
  fs::remove_all(fresh);
  fs::create_directory(fresh);
  lock = std::make_unique<RunFolderLock>(fresh.string());
  if (::renameat2(AT_FDCWD, fresh.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0) {
    const int e = errno;
    fs::remove_all(fresh);
    throw Error(
        fmt::format("run.overwrite: cannot replace {}: {}", dir.string(), std::strerror(e)));
  }
  std::error_code ec;
  fs::remove_all(fresh, ec);  // now the old run; a leftover is only a hidden folder
}

}  // namespace

std::string create_run_folder(const SiftConfig& config, std::unique_ptr<RunFolderLock>& lock) {
  const fs::path dir = fs::path(config.run.dir) /
                       (config.run.name.empty() ? default_run_name(config) : config.run.name);
  check_own_folder(dir.string(), "run.dir", /*create=*/true);
  if (is_empty_run_folder(dir)) {
    lock = std::make_unique<RunFolderLock>(dir.string());
    if (is_empty_run_folder(dir)) return dir.string();
    lock.reset();  // another process wrote into it meanwhile
  }
  if (!config.run.overwrite) {
    throw Error(fmt::format(
        "run folder {} is not empty: pass --overwrite (or set run.overwrite: true) to replace "
        "it, or continue it with `sift train --resume {}`",
        dir.string(), dir.string()));
  }
  const std::vector<std::string> foreign = foreign_files(dir);
  if (!foreign.empty() && !config.run.overwrite_foreign) {
    throw Error(fmt::format(
        "run.overwrite: {} holds {} file{} Sift did not write ({}{}); --overwrite would delete "
        "them: move them, or pass --overwrite twice (run.overwrite_foreign: true) to delete them",
        dir.string(), foreign.size(), foreign.size() == 1 ? "" : "s",
        fmt::join(foreign.begin(), foreign.begin() + std::min<size_t>(foreign.size(), 5), ", "),
        foreign.size() > 5 ? ", ..." : ""));
  }
  for (const auto& name : foreign) {
    std::fprintf(stderr, "sift: run.overwrite: deleting %s\n", (dir / name).c_str());
  }
  try {
    replace_run_folder(dir, lock);
  } catch (const fs::filesystem_error& e) {
    throw Error(
        fmt::format("run.overwrite: cannot replace {}: {}", dir.string(), e.code().message()));
  }
  return dir.string();
}

}  // namespace sift
