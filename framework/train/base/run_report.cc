#include "framework/train/base/run_report.h"

#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <thread>

#include "core/atomic_file.h"
#include "core/crc32.h"
#include "core/file_bytes.h"
#include "core/provenance.h"
#include "framework/runtime/base/export_format.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/train/base/phases.h"
#include "framework/train/base/report_html.h"

namespace sift {
namespace {

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

nlohmann::json run_environment(const RunPlace& place) {
  std::string config_text;
  if (!place.config_file.empty() && std::filesystem::exists(place.config_file)) {
    config_text = read_file_bytes(place.config_file);
  }
  nlohmann::json environment = provenance_record(config_text);
  environment.update({{"finished", utc_iso8601(std::time(nullptr))},
                      {"program", place.program},
                      {"libtorch", place.libtorch},
                      {"device", place.device},
                      {"threads", place.threads},
                      {"hardware_threads", std::thread::hardware_concurrency()},
                      {"world_size", place.world_size},
                      {"data_workers", place.data_workers},
                      // As the launcher (tools/launcher) left them, unless the user set them.
                      {"omp_wait_policy", env_or_empty("OMP_WAIT_POLICY")},
                      {"glibc_tunables", env_or_empty("GLIBC_TUNABLES")},
                      {"openblas_num_threads", env_or_empty("OPENBLAS_NUM_THREADS")}});
  return environment;
}

std::string unsaved_epoch_end(double save_seconds, double trained_seconds) {
  return fmt::format(
      "last.ckpt: not saved at this epoch's end: a save takes about {:.2f} s, more than a "
      "tenth of the {:.2f} s trained since the last (train.save_last: auto; set it to "
      "epoch to save at every epoch's end)",
      save_seconds, trained_seconds);
}

std::vector<std::string> ending_lines(const TrainConfig& t, bool stopped_early,
                                      int64_t skipped_batches) {
  std::vector<std::string> lines;
  if (stopped_early) {
    lines.push_back(fmt::format("stopped early: no improvement of valid {} in {} validations",
                                to_string(t.best_metric), t.patience));
  }
  if (skipped_batches > 0) {
    lines.push_back(
        fmt::format("skipped {} batches with a non-finite loss or gradient "
                    "(train.on_nonfinite: skip_batch)",
                    skipped_batches));
  }
  return lines;
}

Interrupted interrupted_at(int signal_number, int64_t step, int64_t epoch,
                           const std::string& run_dir) {
  const char* name = signal_number == SIGINT    ? "SIGINT"
                     : signal_number == SIGTERM ? "SIGTERM"
                                                : "a signal";
  return Interrupted(
      fmt::format("stopped by {} at step {} (epoch {}), {} saved; continue "
                  "with: sift train --resume {}",
                  name, step, epoch, run_file(run_dir, kLastCheckpointFile), run_dir),
      signal_number);
}

void write_reports(const std::string& dir, const nlohmann::json& report, std::string text,
                   const std::string& extra) {
  if (const auto empty = report["train"]["empty_texts"].get<uint64_t>(); empty > 0) {
    text +=
        fmt::format("\nTraining records with a label and an empty text: {} (trained on)\n", empty);
  }
  text += "\n" + phase_table_text(report["train"]["phases"]) + extra;
  write_file_atomically(run_file(dir, kReportJsonFile), report.dump(2) + "\n");
  write_file_atomically(run_file(dir, kReportTextFile), text);
  write_file_atomically(run_file(dir, kReportHtmlFile), report_html({dir}));
}

Error data_error_at(const std::string& what, bool saved, int64_t step, int64_t epoch,
                    const std::string& run_dir) {
  if (!saved) {
    return Error(
        fmt::format("{}; step {} (epoch {}) could not be saved; once the data is fixed, "
                    "sift train --resume {} goes on from the last save",
                    what, step, epoch, run_dir));
  }
  return Error(
      fmt::format("{}; {} saved at step {} (epoch {}); once the data is fixed, go on "
                  "with: sift train --resume {}",
                  what, run_file(run_dir, kLastCheckpointFile), step, epoch, run_dir));
}

}  // namespace sift
