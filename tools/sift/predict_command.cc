#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <tuple>

#include "core/ascii.h"
#include "core/error.h"
#include "datasets/batch.h"
#include "framework/runtime/collate.h"
#include "framework/runtime/compute_threads.h"
#include "framework/runtime/export.h"
#include "framework/runtime/loss.h"
#include "framework/runtime/model_bundle.h"
#include "tools/sift/commands.h"

namespace sift::cli {
namespace {

struct PredictArgs {
  std::string model;
  std::string input = "-";
  int64_t top_k = 1;
  double threshold = -1.0;  // < 0: multi-label the run's train.threshold, single-label none
  bool json = false;
  std::string quantized_engine;  // empty: LibTorch's default
};

// {"label", "score"} as Hugging Face pipelines write them; "probability" is the old name of
// "score", kept as an alias for one release (0.2 drops it).
nlohmann::json prediction_json(const std::string& label, double score) {
  return {{"label", label}, {"score", score}, {"probability", score}};
}

// One JSON line; bytes that are not valid UTF-8 in the input text become U+FFFD rather
// than an error (fastText reads bytes, and so do the models).
std::string dump_line(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// fastText's predict ignores the __label__ tokens of its input lines (datasets/record_parser.cc
// recognises labels by the same prefix): drop them so a labelled line scores as its text.
void drop_label_tokens(std::string& line) {
  static constexpr std::string_view kPrefix = "__label__";
  if (line.find(kPrefix) == std::string::npos) return;
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    size_t start = i;
    while (i < line.size() && is_ascii_space(line[i])) ++i;
    size_t word = i;
    while (i < line.size() && !is_ascii_space(line[i])) ++i;
    std::string_view token(line.data() + word, i - word);
    if (token.substr(0, kPrefix.size()) == kPrefix) continue;  // the token and the space before it
    out.append(line, start, i - start);
  }
  size_t b = out.find_first_not_of(" \t");
  line = b == std::string::npos ? std::string() : out.substr(b);
}

// Multi-label: every label over the threshold, most probable first (none: an empty line).
void print_multi_label(const ModelBundle& b, const std::vector<std::string>& texts,
                       const torch::Tensor& probs, double threshold, bool json) {
  auto [values, indices] = probs.sort(1, /*descending=*/true);
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto row = static_cast<int64_t>(i);
    const float* v = values[row].data_ptr<float>();
    const int64_t* idx = indices[row].data_ptr<int64_t>();
    nlohmann::json predictions = nlohmann::json::array();
    std::string line;
    for (int64_t j = 0; j < probs.size(1) && v[j] > threshold; ++j) {
      predictions.push_back(prediction_json(b.task.labels.name(idx[j]), v[j]));
      line += fmt::format("{}{}\t{:.4f}", j ? "\t" : "", b.task.labels.name(idx[j]), v[j]);
    }
    if (json) line = dump_line(nlohmann::json{{"text", texts[i]}, {"predictions", predictions}});
    std::cout << line << "\n";
  }
}

// Single-label: the k most probable labels (`values`, `indices` [batch, k], best first; a
// label -1 ends a row early); with a threshold >= 0 only those whose probability is at
// least the threshold (as `fasttext predict FILE k threshold`).
void print_batch(const ModelBundle& b, const std::vector<std::string>& texts,
                 const torch::Tensor& values, const torch::Tensor& indices, int64_t k,
                 double threshold, bool json) {
  for (size_t i = 0; i < texts.size(); ++i) {
    auto v = values[static_cast<int64_t>(i)];
    auto idx = indices[static_cast<int64_t>(i)];
    if (json) {
      nlohmann::json out = {{"text", texts[i]}, {"predictions", nlohmann::json::array()}};
      for (int64_t j = 0; j < k && idx[j].item<int64_t>() >= 0 && v[j].item<double>() >= threshold;
           ++j) {
        out["predictions"].push_back(
            prediction_json(b.task.labels.name(idx[j].item<int64_t>()), v[j].item<double>()));
      }
      std::cout << dump_line(out) << "\n";
    } else {
      std::string line;
      for (int64_t j = 0; j < k && idx[j].item<int64_t>() >= 0 && v[j].item<double>() >= threshold;
           ++j) {
        line += fmt::format("{}{}\t{:.4f}", j ? "\t" : "",
                            b.task.labels.name(idx[j].item<int64_t>()), v[j].item<double>());
      }
      std::cout << line << "\n";
    }
  }
}

void run_predict(const PredictArgs& args) {
  if (!args.quantized_engine.empty()) use_quantized_engine(args.quantized_engine);
  ModelBundle bundle = load_model(args.model);
  apply_threads(bundle.config.run.threads);
  if (args.top_k < 1) throw Error("--top-k: The number of labels to print must be >= 1.");
  const int64_t k = std::min<int64_t>(args.top_k, bundle.task.labels.size());
  const bool multi_label = bundle.config.data.multi_label;
  const double threshold =
      args.threshold >= 0 ? args.threshold : (multi_label ? bundle.config.train.threshold : -1.0);
  if (multi_label && !(threshold > 0 && threshold < 1)) {
    throw Error("--threshold: The decision threshold must be between 0 and 1, exclusive.");
  }
  if (!multi_label && args.threshold > 1) {
    throw Error("--threshold: a probability threshold must be between 0 and 1.");
  }
  std::ifstream file;
  if (args.input != "-") {
    file.open(args.input);
    if (!file) throw Error(fmt::format("cannot open {}: {}", args.input, std::strerror(errno)));
  }
  std::istream& in = args.input == "-" ? std::cin : file;
  TextEncoder encoder = make_encoder(bundle.task);
  torch::NoGradGuard no_grad;
  RawBatch batch;
  std::vector<std::string> texts;
  std::vector<int64_t> ids;
  auto flush = [&] {
    if (texts.empty()) return;
    const ModelInput input = to_input(batch, bundle.task.encoder.kind, bundle.device);
    // hs: fastText's search down the tree instead of every label's probability.
    torch::Tensor values, indices;
    if (!multi_label) std::tie(values, indices) = bundle.model->top_k(input, k, threshold);
    if (values.defined()) {
      print_batch(bundle, texts, values, indices, k, threshold, args.json);
    } else if (multi_label) {
      auto probs = torch::sigmoid(bundle.model->forward(input).to(torch::kFloat32))
                       .to(torch::kCPU)
                       .contiguous();
      print_multi_label(bundle, texts, probs, threshold, args.json);
    } else {
      auto probs = probabilities(bundle.model->forward(input), false, bundle.config.train.loss);
      std::tie(values, indices) = probs.to(torch::kCPU).topk(k, 1);
      print_batch(bundle, texts, values, indices, k, threshold, args.json);
    }
    texts.clear();
    batch.clear();
  };
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    drop_label_tokens(line);
    encoder.encode(line, ids);
    batch.add(ids, 0);
    texts.push_back(line);
    if (texts.size() == 256) flush();
  }
  flush();
  std::cout.flush();
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  auto* cmd =
      app.add_subcommand("predict", "Classify lines of text (one per line) from a file or stdin.");
  cmd->add_option("--model", args->model,
                  "Run folder of a trained model, or a file from `sift export`")
      ->required();
  cmd->add_option("--input", args->input, "Text file, one text per line; - for stdin")
      ->capture_default_str();
  cmd->add_option("--top-k", args->top_k, "Labels to print per line (single-label models)")
      ->capture_default_str();
  cmd->add_option("--threshold", args->threshold,
                  "Multi-label models: print every label whose probability exceeds this "
                  "(default: the run's train.threshold). Single-label models: of the top k, "
                  "print only labels with probability >= this (as fasttext predict; default: all)");
  cmd->add_flag("--json", args->json,
                "One JSON object per line: {\"text\", \"predictions\": [{\"label\", \"score\"}]} "
                "as Hugging Face pipelines; \"probability\" repeats \"score\" under its old name "
                "for this release only (deprecated, removed in 0.2)");
  cmd->add_option("--quantized-engine", args->quantized_engine,
                  "int8 exports: the quantized engine their weights are packed for when "
                  "loaded (onednn, qnnpack or fbgemm, as this LibTorch has; default: "
                  "LibTorch's own choice)")
      ->envname("SIFT_QUANTIZED_ENGINE");
  cmd->callback([args] { run_predict(*args); });
}

}  // namespace sift::cli
