// `sift predict`'s options and output lines, without LibTorch: sift-main's predict
// command and sift-lite (tools/lite/, the torch-free fastText path) declare, check and
// print them alike.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sift::cli {

struct PredictArgs {
  std::string model;
  std::string input = "-";
  int64_t top_k = 1;
  double threshold = -1.0;  // < 0: multi-label the run's train.threshold, single-label none
  bool json = false;
  std::string quantized_engine;  // empty: LibTorch's default
};

// Declares the options of `predict` on `cmd`, into `args`.
void add_predict_options(CLI::App& cmd, PredictArgs& args);

// What the options come to for a model with `labels` labels: the number of labels to
// print and the threshold (multi-label: the run's `train_threshold` unless given).
// sift::Error naming the option when out of range.
struct PredictSettings {
  int64_t k = 1;
  double threshold = -1.0;
};
PredictSettings resolve_predict(const PredictArgs& args, int64_t labels, bool multi_label,
                                double train_threshold);

// fastText's predict ignores the __label__ tokens of its input lines
// (datasets/record_parser.cc recognises labels by the same prefix): drops them so that a
// labelled line scores as its text.
void drop_label_tokens(std::string& line);

// One output line for `text`: "label<TAB>score" pairs (4 decimals), or with `json` one
// JSON object {"text", "predictions": [{"label", "score", "probability"}]}.
using Predictions = std::vector<std::pair<std::string, double>>;
std::string prediction_line(const std::string& text, const Predictions& predictions, bool json);

}  // namespace sift::cli
