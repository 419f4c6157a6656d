#include "tools/sift/summary.h"

#include <fmt/format.h>

#include "framework/runtime/run_folder.h"

namespace sift::cli {

nlohmann::json summary_json(const nlohmann::json& report) {
  nlohmann::json out = {{"run_dir", report.value("run_dir", "")}};
  out["splits"] = nlohmann::json::object();
  for (const auto& [name, split] : report["splits"].items()) {
    out["splits"][name] = {{"accuracy", split["accuracy"]},
                           {"macro_f1", split["macro_f1"]},
                           {"examples", split["examples"]}};
    // multi-label runs; eval --k
    for (const char* key : {"micro_f1", "hamming_loss", "k", "precision_at_k", "recall_at_k"}) {
      if (split.contains(key)) out["splits"][name][key] = split[key];
    }
  }
  if (report.contains("train")) out["train"] = report["train"];
  return out;
}

std::string summary_text(const nlohmann::json& report) {
  std::string out;
  for (const auto& [name, split] : report["splits"].items()) {
    if (split.contains("micro_f1")) {
      out += fmt::format(
          "{:<6} micro-F1 {:.4f}  macro-F1 {:.4f}  subset accuracy {:.4f}  "
          "Hamming loss {:.4f}  ({} examples)\n",
          name, split["micro_f1"].get<double>(), split["macro_f1"].get<double>(),
          split["accuracy"].get<double>(), split["hamming_loss"].get<double>(),
          split["examples"].get<int64_t>());
      continue;
    }
    out += fmt::format("{:<6} accuracy {:.4f}  macro-F1 {:.4f}  ({} examples)\n", name,
                       split["accuracy"].get<double>(), split["macro_f1"].get<double>(),
                       split["examples"].get<int64_t>());
  }
  if (report.contains("train")) {
    const auto& t = report["train"];
    out += fmt::format("trained {} steps on {} records in {:.1f} s ({:.0f} examples/s)\n",
                       t["steps"].get<int64_t>(), t["records"].get<uint64_t>(),
                       t["seconds"].get<double>(), t["examples_per_second"].get<double>());
    if (t.contains("training_path")) {
      out += fmt::format("training: {}\n", t["training_path"].get<std::string>());
    }
    if (t["skipped_records"].get<uint64_t>() > 0) {
      out += fmt::format("skipped {} malformed training records\n",
                         t["skipped_records"].get<uint64_t>());
    }
    if (t.value("empty_texts", uint64_t{0}) > 0) {
      out += fmt::format("trained on {} records with an empty text\n",
                         t["empty_texts"].get<uint64_t>());
    }
    out += fmt::format("model and report: {} ({}, {})\n", report["run_dir"].get<std::string>(),
                       kBestCheckpointFile, kReportTextFile);
  }
  return out;
}

}  // namespace sift::cli
