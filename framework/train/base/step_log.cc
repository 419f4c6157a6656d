#include "framework/train/base/step_log.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/file_bytes.h"
#include "core/open_for_writing.h"

namespace sift {
namespace {

const std::vector<std::string> kTrainColumns = {"step",      "epoch",          "train_loss",
                                                "lr",        "examples_per_s", "tokens_per_s",
                                                "grad_norm", "loss_scale"};

std::string cell(double value) { return std::isfinite(value) ? fmt::format("{}", value) : ""; }

std::vector<std::string> split_cells(const std::string& line) {
  std::vector<std::string> cells;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    cells.push_back(line.substr(start, comma - start));
    if (comma == std::string::npos) return cells;
    start = comma + 1;
  }
}

std::string join(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) line += (i ? "," : "") + cells[i];
  return line + "\n";
}

// The rows of an earlier metrics.csv that a resume at `step` keeps: those of steps up to
// it, when the file has the same columns.
std::string kept_rows(const std::string& path, const std::vector<std::string>& columns,
                      int64_t step) {
  if (!std::filesystem::exists(path)) return join(columns);
  const StepLogTable table = parse_step_log(read_file_bytes(path));
  if (table.columns != columns) return join(columns);
  std::string text = join(columns);
  for (const auto& row : table.rows) {
    char* end = nullptr;
    const long long row_step = std::strtoll(row[0].c_str(), &end, 10);
    if (end != row[0].c_str() && row_step <= step) text += join(row);
  }
  return text;
}

}  // namespace

StepLog::~StepLog() {
  if (file_ != nullptr) std::fclose(file_);
}

void StepLog::open(const std::string& path, const std::vector<std::string>& valid_columns,
                   int64_t keep_up_to_step, const std::string& tb_dir, bool distill) {
  columns_ = kTrainColumns;
  if (distill) columns_.push_back("distill_loss");
  train_columns_ = columns_.size();
  for (const auto& c : valid_columns) columns_.push_back("valid_" + c);
  last_row_ = std::chrono::steady_clock::now();
  window_first_ = keep_up_to_step + 1;
  if (path.empty()) return;
  path_ = path;
  write_file_atomically(
      path, keep_up_to_step > 0 ? kept_rows(path, columns_, keep_up_to_step) : join(columns_));
  file_ = fopen_for_writing(path, WriteMode::append);
  if (!tb_dir.empty()) tb_.open(tb_dir);
}

void StepLog::write_row(const std::vector<std::string>& cells) {
  if (file_ == nullptr) return;
  const std::string line = join(cells);
  // Flushed per row (a few per epoch by default) so that `tail -f` and a killed run see
  // every row written; never fsync'ed: losing the last rows to a power cut is fine.
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    throw Error(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
  }
  if (!tb_.is_open()) return;
  const int64_t step = std::stoll(cells[0]);
  for (size_t i = 2; i < cells.size(); ++i) {
    if (!cells[i].empty()) tb_.scalar(columns_[i], step, std::stod(cells[i]));
  }
  tb_.flush();
}

void StepLog::train_row(const StepRow& row) {
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - last_row_).count();
  last_row_ = now;
  const double nan = std::nan("");
  std::vector<std::string> cells = {
      std::to_string(row.step),
      std::to_string(row.epoch),
      cell(examples_ > 0 ? loss_sum_ / static_cast<double>(examples_) : nan),
      cell(row.lr),
      cell(seconds > 0 ? static_cast<double>(examples_) / seconds : nan),
      cell(seconds > 0 ? static_cast<double>(tokens_) / seconds : nan),
      cell(row.grad_norm),
      cell(row.loss_scale)};
  if (train_columns_ > kTrainColumns.size()) {
    cells.push_back(
        cell(distill_examples_ > 0 ? distill_sum_ / static_cast<double>(distill_examples_) : nan));
  }
  cells.resize(columns_.size());
  if (examples_ > 0)
    last_window_ = {loss_sum_ / static_cast<double>(examples_), window_first_, row.step};
  window_first_ = row.step + 1;
  examples_ = tokens_ = distill_examples_ = 0;
  loss_sum_ = distill_sum_ = 0.0;
  write_row(cells);
}

nlohmann::json StepLog::window() const {
  if (examples_ == 0 && distill_examples_ == 0) return nullptr;
  return {{"examples", examples_},       {"tokens", tokens_},
          {"loss_sum", loss_sum_},       {"distill_examples", distill_examples_},
          {"distill_sum", distill_sum_}, {"first_step", window_first_}};
}

void StepLog::restore_window(const nlohmann::json& window) {
  if (!window.is_object()) return;
  examples_ = window.value("examples", int64_t{0});
  tokens_ = window.value("tokens", int64_t{0});
  loss_sum_ = window.value("loss_sum", 0.0);
  distill_examples_ = window.value("distill_examples", int64_t{0});
  distill_sum_ = window.value("distill_sum", 0.0);
  window_first_ = window.value("first_step", window_first_);
}

LossWindow StepLog::loss_window(int64_t step) const {
  if (examples_ == 0) return last_window_;
  return {loss_sum_ / static_cast<double>(examples_), window_first_, step};
}

void StepLog::valid_row(int64_t step, int64_t epoch, const nlohmann::json& record) {
  std::vector<std::string> cells(columns_.size());
  cells[0] = std::to_string(step);
  cells[1] = std::to_string(epoch);
  for (size_t i = train_columns_; i < columns_.size(); ++i) {
    auto it = record.find(columns_[i]);
    if (it != record.end() && it->is_number()) cells[i] = cell(it->get<double>());
  }
  write_row(cells);
  // Validation time is not training throughput: the next row measures from here.
  last_row_ = std::chrono::steady_clock::now();
}

StepLogTable parse_step_log(const std::string& text) {
  StepLogTable table;
  std::istringstream in(text);
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no newline after it: cut short
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::string> cells = split_cells(line);
    if (header) {
      table.columns = std::move(cells);
      header = false;
    } else if (cells.size() == table.columns.size()) {
      table.rows.push_back(std::move(cells));
    }
  }
  return table;
}

}  // namespace sift
