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

// How `sift predict` writes a text's predictions (--format).
enum class PredictFormat {
  tsv,           // label<TAB>score pairs (4 decimals)
  json,          // one JSON object per line, as Hugging Face pipelines
  fasttext,      // `fasttext predict`'s line: __label__A __label__B
  fasttext_prob  // `fasttext predict-prob`'s line: __label__A 0.87 __label__B 0.12
};

struct PredictArgs {
  std::string model;
  std::string input = "-";
  int64_t top_k = 1;
  double threshold = -1.0;  // < 0: multi-label the run's train.threshold, single-label none
  bool json = false;        // --json, the same as --format json
  PredictFormat format = PredictFormat::tsv;
  bool labels_only = false;      // tsv: labels without scores
  std::string quantized_engine;  // empty: LibTorch's default
  int64_t max_line_bytes = 0;    // 0: the run's data.max_line_bytes
};

// Declares the options of `predict` on `cmd`, into `args`.
void add_predict_options(CLI::App& cmd, PredictArgs& args);

// What the options come to for a model with `labels` labels: the number of labels to
// print and the threshold (multi-label: the run's `train_threshold` unless given).
// sift::Error naming the option when out of range.
// The longest line: --max-line-bytes, else the run's data.max_line_bytes.
struct PredictSettings {
  int64_t k = 1;
  double threshold = -1.0;
  uint64_t max_line_bytes = 1 << 20;
};
PredictSettings resolve_predict(const PredictArgs& args, int64_t labels, bool multi_label,
                                double train_threshold, int64_t run_max_line_bytes = 1 << 20);

// The texts to classify: --input, or standard input for "-", read a line at a time in
// bounded memory: a line over `max_line_bytes` is refused naming --input:LINE and the cap
// (a 210 MB line took 2.6 GB in sift-lite and 5.7 GB in sift-main before, issue #42).
class TextInput {
 public:
  // sift::Error naming the file when it cannot be opened. `label_prefix`: the run's
  // data.label_prefix.
  TextInput(const std::string& input, uint64_t max_line_bytes, std::string label_prefix);
  // The next text: a line without its CR and its label tokens (fastText's predict
  // ignores them: a labelled line scores as its text); false at the end.
  bool next(std::string& line);

 private:
  std::ifstream file_;
  std::istream* in_;
  std::string name_;
  uint64_t max_line_bytes_;
  std::string label_prefix_;
  int64_t line_number_ = 0;
};

using Predictions = std::vector<std::pair<std::string, double>>;

// Multi-label: every label whose probability (one per name) exceeds `threshold`, most
// probable first (ties: the lower id first).
Predictions labels_over(const float* probabilities, const std::vector<std::string>& names,
                        double threshold);

// How predictions are written, as the options ask (--json is --format json).
struct PredictOutput {
  PredictFormat format = PredictFormat::tsv;
  bool labels_only = false;
  std::string label_prefix = "__label__";  // before each label in the fasttext formats
};
PredictOutput predict_output(const PredictArgs& args);

// One output line for `text`: "label<TAB>score" pairs (4 decimals; labels only with
// labels_only), one JSON object {"text", "predictions": [{"label", "score",
// "probability"}]}, or fastText's "__label__A 0.87" (probabilities as its 6 significant
// digits, for fasttext_prob only).
std::string prediction_line(const std::string& text, const Predictions& predictions,
                            const PredictOutput& output);

}  // namespace sift::cli
