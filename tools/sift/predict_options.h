// `sift predict`'s options and output lines, without LibTorch: sift-main's predict
// command and sift-lite (tools/lite/, the torch-free fastText path) declare, check and
// print them alike.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <fstream>
#include <istream>
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

// The texts to classify: --input opened into `file`, or standard input for "-";
// sift::Error naming the file when it cannot be opened.
std::istream& open_input(const std::string& input, std::ifstream& file);
// The next text: a line without its CR and its __label__ tokens (fastText's predict
// ignores them: a labelled line scores as its text); false at the end.
bool next_text(std::istream& in, std::string& line);

using Predictions = std::vector<std::pair<std::string, double>>;

// Multi-label: every label whose probability (one per name) exceeds `threshold`, most
// probable first (ties: the lower id first).
Predictions labels_over(const float* probabilities, const std::vector<std::string>& names,
                        double threshold);

// One output line for `text`: "label<TAB>score" pairs (4 decimals), or with `json` one
// JSON object {"text", "predictions": [{"label", "score", "probability"}]}.
std::string prediction_line(const std::string& text, const Predictions& predictions, bool json);

}  // namespace sift::cli
