#include "tools/sift/imported_run.h"

#include <fmt/format.h>

#include <filesystem>

#include "config/loader.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/open_for_writing.h"
#include "datasets/labels.h"
#include "framework/runtime/base/run_folder.h"

namespace sift::cli {

void make_run_folder(const std::string& out, bool force) {
  if (std::filesystem::exists(std::filesystem::path(out) / kBestCheckpointFile) && !force) {
    throw Error(fmt::format("{} already holds a model; give --force to replace it", out));
  }
  check_own_folder(out, "--out", /*create=*/true);
}

void write_imported_run(const std::string& out, const std::string& model, const SiftConfig& config,
                        const std::vector<std::string>& labels, const Vocab& vocab,
                        const Checkpoint& c) {
  write_file_atomically(run_file(out, kConfigFile), dump_config(config));
  LabelSet(labels, model).save(run_file(out, kLabelsFile));
  vocab.save(run_file(out, kVocabFile));
  save_checkpoint(run_file(out, kBestCheckpointFile), c);
}

}  // namespace sift::cli
