#include "framework/train/shared_run_folder.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/crc32.h"
#include "core/error.h"
#include "framework/runtime/base/run_folder.h"

namespace sift {
namespace {

constexpr size_t kEdgeBytes = 64 * 1024;

// "SIZE:CRC" of a file's first and last 64 KiB (a checkpoint's header and its tail differ
// between any two saves), or "missing".
std::string file_mark(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "missing";
  in.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(in.tellg());
  std::string head(std::min(size, kEdgeBytes), '\0');
  std::string tail(std::min(size, kEdgeBytes), '\0');
  in.seekg(0);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  in.seekg(static_cast<std::streamoff>(size - tail.size()));
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  return fmt::format("{}:{:08x}", size, crc32_update(crc32_of(head), tail));
}

// last.ckpt first, run.lock last: a stale copy is named by its checkpoint (a resume with
// --set rewrites config.yaml too), a fresh folder of the same config by its lock.
const char* const kMarkedFiles[] = {kLastCheckpointFile, kConfigFile, kLabelsFile, kVocabFile,
                                    kLockFile};

nlohmann::json folder_marks(const std::string& run_dir) {
  nlohmann::json marks = nlohmann::json::object();
  for (const char* f : kMarkedFiles) marks[f] = file_mark(run_file(run_dir, f));
  return marks;
}

// What this rank sees wrong, or "".
std::string verdict(Distributed& dist, const std::string& run_dir, const nlohmann::json& primary) {
  const nlohmann::json mine = folder_marks(run_dir);
  if (mine.at(kConfigFile) == "missing") {
    return fmt::format(
        "{} does not see the run folder {} (no {} there): resume reads the run folder on every "
        "rank, so on several machines run.dir must be on a file system every node shares, at the "
        "same path",
        dist.who(dist.rank()), run_dir, kConfigFile);
  }
  for (const char* f : kMarkedFiles) {
    if (mine.at(f) == primary.at(f)) continue;
    return fmt::format(
        "{} sees another or a stale copy of the run folder {}: its {} differs from the one {} "
        "sees; run.dir must be one folder every node shares, at the same path, not a copy "
        "per node",
        dist.who(dist.rank()), run_dir, f, dist.who(0));
  }
  return "";
}

}  // namespace

void check_shared_run_folder(Distributed& dist, const std::string& run_dir) {
  if (!dist.is_group()) return;
  const std::string marks = dist.is_primary() ? folder_marks(run_dir).dump() : "";
  const auto primary = nlohmann::json::parse(dist.share_from_primary("run_folder", marks));
  const std::string mine = dist.is_primary() ? "" : verdict(dist, run_dir, primary);
  for (const std::string& v : dist.all_gather(mine)) {
    if (!v.empty()) throw Error(v);
  }
}

void check_run_folder_visible(const std::string& run_dir, const std::string& last_path) {
  const auto env = distributed_env_from_environment();
  if (!env || env->rank == 0 || std::filesystem::exists(last_path)) return;
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  throw Error(fmt::format(
      "rank {} at {} sees no {}: resume reads the run folder on every rank, so on several "
      "machines run.dir ({}) must be on a file system every node shares, at the same path",
      env->rank, host, last_path, run_dir));
}

}  // namespace sift
