#include "tools/tune/trial_record.h"

#include <fmt/format.h>

#include <fstream>

#include "core/atomic_file.h"
#include "core/error.h"

namespace sift {
namespace {

const std::vector<std::string> kStatusNames = {"finished", "pruned", "budget", "failed",
                                               "interrupted"};
const std::vector<std::string> kFixedColumns = {"trial",      "status",  "metric",  "epochs",
                                                "best_epoch", "seconds", "started", "model_bytes"};

std::string field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// One CSV record (quoted fields may not span lines here: reasons are one line).
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

TrialStatus status_of(const std::string& text, const std::string& origin) {
  for (size_t i = 0; i < kStatusNames.size(); ++i) {
    if (kStatusNames[i] == text) return static_cast<TrialStatus>(i);
  }
  throw Error(fmt::format("{}: unknown trial status '{}'", origin, text));
}

TrialRecord parse_record(const std::vector<std::string>& header,
                         const std::vector<std::string>& cells, const std::string& origin) {
  if (cells.size() != header.size()) {
    throw Error(
        fmt::format("{}: {} fields where the header has {}", origin, cells.size(), header.size()));
  }
  TrialRecord r;
  try {
    r.number = std::stoll(cells[0]);
    r.status = status_of(cells[1], origin);
    r.has_metric = !cells[2].empty();
    r.metric = r.has_metric ? std::stod(cells[2]) : 0.0;
    r.epochs = std::stoll(cells[3]);
    r.best_epoch = std::stoll(cells[4]);
    r.seconds = std::stod(cells[5]);
    r.started = std::stod(cells[6]);
    r.model_bytes = std::stod(cells[7]);
  } catch (const std::logic_error&) {
    throw Error(fmt::format("{}: a number field does not read as a number", origin));
  }
  for (size_t i = kFixedColumns.size(); i + 2 < header.size(); ++i) r.values[header[i]] = cells[i];
  r.reason = cells[cells.size() - 2];
  r.run_dir = cells.back();
  return r;
}

}  // namespace

const std::vector<std::string>& trial_status_names() { return kStatusNames; }

std::string to_string(TrialStatus status) { return kStatusNames[static_cast<size_t>(status)]; }

void write_trials_csv(const std::string& path, const std::vector<TrialRecord>& records,
                      const std::vector<std::string>& keys) {
  std::string out =
      fmt::format("{},{},reason,run_dir\n", fmt::join(kFixedColumns, ","), fmt::join(keys, ","));
  for (const auto& r : records) {
    out += fmt::format("{},{},{},{},{},{:.1f},{:.1f},{:.0f}", r.number, to_string(r.status),
                       r.has_metric ? fmt::format("{:.6f}", r.metric) : "", r.epochs, r.best_epoch,
                       r.seconds, r.started, r.model_bytes);
    for (const auto& key : keys) {
      const auto it = r.values.find(key);
      out += "," + field(it == r.values.end() ? "" : it->second);
    }
    out += "," + field(r.reason) + "," + field(r.run_dir) + "\n";
  }
  write_file_atomically(path, out);
}

std::vector<TrialRecord> read_trials_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("cannot open {}", path));
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split_csv(line);
  if (header.size() < kFixedColumns.size() + 2 || header[0] != "trial") {
    throw Error(fmt::format("{}:1: not a trials file of sift tune", path));
  }
  std::vector<TrialRecord> records;
  for (int64_t n = 2; std::getline(in, line); ++n) {
    if (!line.empty())
      records.push_back(parse_record(header, split_csv(line), fmt::format("{}:{}", path, n)));
  }
  return records;
}

}  // namespace sift
