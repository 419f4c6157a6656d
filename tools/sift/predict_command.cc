#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <tuple>

#include "core/error.h"
#include "datasets/batch.h"
#include "framework/runtime/collate.h"
#include "framework/runtime/compute_threads.h"
#include "framework/runtime/export.h"
#include "framework/runtime/loss.h"
#include "framework/runtime/model_bundle.h"
#include "tools/sift/commands.h"
#include "tools/sift/predict_options.h"

namespace sift::cli {
namespace {

// Multi-label: every label over the threshold, most probable first (none: an empty line).
void print_multi_label(const ModelBundle& b, const std::vector<std::string>& texts,
                       const torch::Tensor& probs, double threshold, bool json) {
  for (size_t i = 0; i < texts.size(); ++i) {
    const float* row = probs.data_ptr<float>() + static_cast<int64_t>(i) * probs.size(1);
    std::cout << prediction_line(texts[i], labels_over(row, b.task.labels.names(), threshold), json)
              << "\n";
  }
}

// Single-label: the k most probable labels (`values`, `indices` [batch, k], best first; a
// label -1 ends a row early); with a threshold >= 0 only those whose probability is at
// least the threshold (as `fasttext predict FILE k threshold`).
void print_batch(const ModelBundle& b, const std::vector<std::string>& texts,
                 const torch::Tensor& values, const torch::Tensor& indices, int64_t k,
                 double threshold, bool json) {
  const torch::Tensor v = values.to(torch::kFloat32).contiguous();
  const torch::Tensor idx = indices.to(torch::kInt64).contiguous();
  for (size_t i = 0; i < texts.size(); ++i) {
    const float* vi = v.data_ptr<float>() + static_cast<int64_t>(i) * v.size(1);
    const int64_t* ii = idx.data_ptr<int64_t>() + static_cast<int64_t>(i) * idx.size(1);
    Predictions predictions;
    for (int64_t j = 0; j < k && ii[j] >= 0 && vi[j] >= threshold; ++j) {
      predictions.emplace_back(b.task.labels.name(ii[j]), vi[j]);
    }
    std::cout << prediction_line(texts[i], predictions, json) << "\n";
  }
}

void run_predict(const PredictArgs& args) {
  if (!args.quantized_engine.empty()) use_quantized_engine(args.quantized_engine);
  ModelBundle bundle = load_model(args.model);
  apply_threads(bundle.config.run.threads);
  const bool multi_label = bundle.config.data.multi_label;
  const PredictSettings s =
      resolve_predict(args, bundle.task.labels.size(), multi_label, bundle.config.train.threshold,
                      bundle.config.data.max_line_bytes);
  const int64_t k = s.k;
  const double threshold = s.threshold;
  sift::cli::TextInput in(args.input, s.max_line_bytes);
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
  while (in.next(line)) {
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
  add_predict_options(*cmd, *args);
  cmd->callback([args] { run_predict(*args); });
}

}  // namespace sift::cli
