#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "datasets/batch.h"
#include "core/error.h"
#include "framework/runtime/export.h"
#include "framework/runtime/model_bundle.h"
#include "framework/train/trainer.h"
#include "tools/sift/commands.h"
#include "framework/runtime/collate.h"

namespace sift::cli {
namespace {

struct PredictArgs {
  std::string model;
  std::string input = "-";
  int64_t top_k = 1;
  double threshold = -1.0;  // multi-label; < 0: the run's train.threshold
  bool json = false;
};

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
      predictions.push_back({{"label", b.task.labels.name(idx[j])}, {"probability", v[j]}});
      line += fmt::format("{}{}\t{:.4f}", j ? "\t" : "", b.task.labels.name(idx[j]), v[j]);
    }
    if (json) line = nlohmann::json{{"text", texts[i]}, {"predictions", predictions}}.dump();
    std::cout << line << "\n";
  }
}

void print_batch(const ModelBundle& b, const std::vector<std::string>& texts,
                 const torch::Tensor& probs, int64_t k, bool json) {
  auto [values, indices] = probs.topk(k, 1);
  for (size_t i = 0; i < texts.size(); ++i) {
    auto v = values[static_cast<int64_t>(i)];
    auto idx = indices[static_cast<int64_t>(i)];
    if (json) {
      nlohmann::json out = {{"text", texts[i]}, {"predictions", nlohmann::json::array()}};
      for (int64_t j = 0; j < k; ++j) {
        out["predictions"].push_back({{"label", b.task.labels.name(idx[j].item<int64_t>())},
                                      {"probability", v[j].item<double>()}});
      }
      std::cout << out.dump() << "\n";
    } else {
      std::string line;
      for (int64_t j = 0; j < k; ++j) {
        line += fmt::format("{}{}\t{:.4f}", j ? "\t" : "", b.task.labels.name(idx[j].item<int64_t>()),
                            v[j].item<double>());
      }
      std::cout << line << "\n";
    }
  }
}

void run_predict(const PredictArgs& args) {
  ModelBundle bundle = load_model(args.model);
  apply_threads(bundle.config.run.threads);
  if (args.top_k < 1) throw Error("--top-k: The number of labels to print must be >= 1.");
  const int64_t k = std::min<int64_t>(args.top_k, bundle.task.labels.size());
  const bool multi_label = bundle.config.data.multi_label;
  const double threshold = args.threshold >= 0 ? args.threshold : bundle.config.train.threshold;
  if (multi_label && !(threshold > 0 && threshold < 1)) {
    throw Error("--threshold: The decision threshold must be between 0 and 1, exclusive.");
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
    auto logits = bundle.model->forward(to_input(batch, bundle.task.encoder.kind, bundle.device));
    if (multi_label) {
      auto probs = torch::sigmoid(logits.to(torch::kFloat32)).to(torch::kCPU).contiguous();
      print_multi_label(bundle, texts, probs, threshold, args.json);
    } else {
      print_batch(bundle, texts, torch::softmax(logits, 1).to(torch::kCPU), k, args.json);
    }
    texts.clear();
    batch.clear();
  };
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
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
  auto* cmd = app.add_subcommand(
      "predict", "Classify lines of text (one per line) from a file or stdin.");
  cmd->add_option("--model", args->model, "Run folder of a trained model, or a file from `sift export`")->required();
  cmd->add_option("--input", args->input, "Text file, one text per line; - for stdin")
      ->capture_default_str();
  cmd->add_option("--top-k", args->top_k, "Labels to print per line (single-label models)")
      ->capture_default_str();
  cmd->add_option("--threshold", args->threshold,
                  "Multi-label models: print every label whose probability exceeds this "
                  "(default: the run's train.threshold)");
  cmd->add_flag("--json", args->json, "One JSON object per line");
  cmd->callback([args] { run_predict(*args); });
}

}  // namespace sift::cli
