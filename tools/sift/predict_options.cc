#include "tools/sift/predict_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

#include "core/ascii.h"
#include "core/error.h"

namespace sift::cli {

void add_predict_options(CLI::App& cmd, PredictArgs& args) {
  cmd.add_option("--model", args.model,
                 "Run folder of a trained model, or a file from `sift export`")
      ->required();
  cmd.add_option("--input", args.input, "Text file, one text per line; - for stdin")
      ->capture_default_str();
  cmd.add_option("--top-k", args.top_k, "Labels to print per line (single-label models)")
      ->capture_default_str();
  cmd.add_option("--threshold", args.threshold,
                 "Multi-label models: print every label whose probability exceeds this "
                 "(default: the run's train.threshold). Single-label models: of the top k, "
                 "print only labels with probability >= this (as fasttext predict; default: all)");
  const std::map<std::string, PredictFormat> formats = {
      {"tsv", PredictFormat::tsv},
      {"json", PredictFormat::json},
      {"fasttext", PredictFormat::fasttext},
      {"fasttext-prob", PredictFormat::fasttext_prob}};
  cmd.add_option("--format", args.format,
                 "tsv: label<TAB>score pairs; json: one JSON object per line, {\"text\", "
                 "\"predictions\": [{\"label\", \"score\"}]} as Hugging Face pipelines "
                 "(\"probability\" repeats \"score\" under its old name for this release "
                 "only, removed in 0.2); fasttext: `fasttext predict`'s __label__A __label__B; "
                 "fasttext-prob: `fasttext predict-prob`'s __label__A 0.87 __label__B 0.12")
      ->transform(CLI::CheckedTransformer(formats, CLI::ignore_case))
      ->default_str("tsv");
  cmd.add_flag("--json", args.json, "The same as --format json");
  cmd.add_flag("--labels-only", args.labels_only, "--format tsv: the labels without their scores");
  cmd.add_option("--quantized-engine", args.quantized_engine,
                 "int8 exports: the quantized engine their weights are packed for when "
                 "loaded (onednn, qnnpack or fbgemm, as this LibTorch has; default: "
                 "LibTorch's own choice)")
      ->envname("SIFT_QUANTIZED_ENGINE");
  cmd.add_option("--max-line-bytes", args.max_line_bytes,
                 "Longest input line, in bytes; a longer one is an error (default: the run's "
                 "data.max_line_bytes)");
}

PredictSettings resolve_predict(const PredictArgs& args, int64_t labels, bool multi_label,
                                double train_threshold, int64_t run_max_line_bytes) {
  if (args.top_k < 1) throw UsageError("--top-k: The number of labels to print must be >= 1.");
  if (args.max_line_bytes < 0) {
    throw UsageError("--max-line-bytes: give 1 or more (0: the run's)");
  }
  PredictSettings s;
  s.k = std::min<int64_t>(args.top_k, labels);
  s.max_line_bytes =
      static_cast<uint64_t>(args.max_line_bytes > 0 ? args.max_line_bytes : run_max_line_bytes);
  s.threshold = args.threshold >= 0 ? args.threshold : (multi_label ? train_threshold : -1.0);
  if (multi_label && !(s.threshold > 0 && s.threshold < 1)) {
    throw UsageError("--threshold: The decision threshold must be between 0 and 1, exclusive.");
  }
  if (!multi_label && args.threshold > 1) {
    throw UsageError("--threshold: a probability threshold must be between 0 and 1.");
  }
  return s;
}

namespace {

// datasets/record_parser.cc recognises labels by the same prefix.
void drop_label_tokens(std::string& line, std::string_view prefix) {
  if (line.find(prefix) == std::string::npos) return;
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    size_t start = i;
    while (i < line.size() && is_ascii_space(line[i])) ++i;
    size_t word = i;
    while (i < line.size() && !is_ascii_space(line[i])) ++i;
    std::string_view token(line.data() + word, i - word);
    if (token.substr(0, prefix.size()) == prefix) continue;  // the token and the space before it
    out.append(line, start, i - start);
  }
  size_t b = out.find_first_not_of(" \t");
  line = b == std::string::npos ? std::string() : out.substr(b);
}

}  // namespace

TextInput::TextInput(const std::string& input, uint64_t max_line_bytes, std::string label_prefix)
    : in_(&std::cin),
      name_(input == "-" ? "standard input" : input),
      max_line_bytes_(max_line_bytes),
      label_prefix_(std::move(label_prefix)) {
  if (input == "-") return;
  file_.open(input);
  if (!file_) throw Error(fmt::format("cannot open {}: {}", input, std::strerror(errno)));
  in_ = &file_;
}

bool TextInput::next(std::string& line) {
  line.clear();
  // A piece at a time (istream::getline into a buffer finds the newline with memchr), so
  // that memory stays within the cap whatever the line's length.
  char piece[1 << 16];
  bool any = false;
  while (true) {
    in_->getline(piece, sizeof(piece));
    const auto n = static_cast<size_t>(in_->gcount());
    const bool full = in_->fail() && !in_->eof() && n == sizeof(piece) - 1;
    if (!in_->fail() && !in_->eof()) {
      line.append(piece, n - 1);  // the newline was read, not stored
    } else if (full || (in_->eof() && n > 0)) {
      line.append(piece, n);
    }
    any = any || n > 0;
    if (line.size() > max_line_bytes_) {
      throw Error(
          fmt::format("{}:{}: a line of more than {} bytes; give --max-line-bytes to "
                      "read longer ones (the run's data.max_line_bytes is the default)",
                      name_, line_number_ + 1, max_line_bytes_));
    }
    if (!full) break;
    in_->clear();
  }
  if (in_->bad()) throw Error(fmt::format("cannot read {}", name_));
  if (!any) return false;
  ++line_number_;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  drop_label_tokens(line, label_prefix_);
  return true;
}

Predictions labels_over(const float* probabilities, const std::vector<std::string>& names,
                        double threshold) {
  std::vector<size_t> order(names.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return probabilities[a] > probabilities[b]; });
  Predictions out;
  for (size_t i : order) {
    if (!(probabilities[i] > threshold)) break;
    out.emplace_back(names[i], probabilities[i]);
  }
  return out;
}

PredictOutput predict_output(const PredictArgs& args) {
  PredictOutput out{args.json ? PredictFormat::json : args.format, args.labels_only};
  if (args.json && args.format != PredictFormat::tsv && args.format != PredictFormat::json) {
    throw UsageError("--json is --format json; it cannot go with another --format");
  }
  if (args.labels_only && out.format != PredictFormat::tsv) {
    throw UsageError("--labels-only goes with --format tsv (fasttext prints labels only already)");
  }
  return out;
}

namespace {

// The labels joined by `sep`, each after `prefix` and followed by its score in `score`'s
// format (nullptr: no scores).
std::string joined(const Predictions& predictions, char sep, const std::string& prefix,
                   const char* score) {
  std::string line;
  for (size_t j = 0; j < predictions.size(); ++j) {
    if (j) line += sep;
    line += prefix + predictions[j].first;
    if (score) line += fmt::format(fmt::runtime(score), predictions[j].second);
  }
  return line;
}

}  // namespace

std::string prediction_line(const std::string& text, const Predictions& predictions,
                            const PredictOutput& output) {
  switch (output.format) {
    case PredictFormat::tsv:
      return joined(predictions, '\t', "", output.labels_only ? nullptr : "\t{:.4f}");
    case PredictFormat::fasttext:
    case PredictFormat::fasttext_prob:
      // fastText writes a probability with ostream's default: 6 significant digits.
      return joined(predictions, ' ', output.label_prefix,
                    output.format == PredictFormat::fasttext_prob ? " {:.6g}" : nullptr);
    case PredictFormat::json:
      break;
  }
  // {"label", "score"} as Hugging Face pipelines write them; "probability" is the old name
  // of "score", kept as an alias for one release (0.2 drops it).
  nlohmann::json out = {{"text", text}, {"predictions", nlohmann::json::array()}};
  for (const auto& [label, score] : predictions) {
    out["predictions"].push_back({{"label", label}, {"score", score}, {"probability", score}});
  }
  // Bytes that are not valid UTF-8 in the input text become U+FFFD rather than an error
  // (fastText reads bytes, and so do the models).
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace sift::cli
