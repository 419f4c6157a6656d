#include "tools/sift/summary.h"

#include <fmt/format.h>

#include "config/metric_table.h"
#include "framework/runtime/base/run_folder.h"

namespace sift::cli {

nlohmann::json summary_json(const nlohmann::json& report) {
  nlohmann::json out = {{"run_dir", report.value("run_dir", "")}};
  out["splits"] = nlohmann::json::object();
  for (const auto& [name, split] : report["splits"].items()) {
    out["splits"][name] = {{"examples", split["examples"]}};
    if (split.contains("k")) out["splits"][name]["k"] = split["k"];  // eval --k
    for (const std::string& key : metric_keys(&MetricName::summary)) {
      if (split.contains(key)) out["splits"][name][key] = split[key];
    }
  }
  if (report.contains("train")) out["train"] = report["train"];
  return out;
}

std::string summary_text(const nlohmann::json& report) {
  std::string out;
  for (const auto& [name, split] : report["splits"].items()) {
    const bool multi = split.contains("micro_f1");
    out += fmt::format("{:<6}", name);
    for (const auto& m : metric_table()) {
      if (!m.summary || !split.contains(m.key)) continue;
      out += fmt::format(" {} {:.4f} ", multi ? m.multi_label_title : m.title,
                         split[m.key].get<double>());
    }
    out += fmt::format(" ({} examples)\n", split["examples"].get<int64_t>());
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
