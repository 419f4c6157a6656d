#include <fstream>
#include <iostream>

#include "core/out_of_memory.h"
#include "datasets/batch.h"
#include "framework/runtime/compute_threads.h"
#include "framework/runtime/export.h"
#include "framework/runtime/model_bundle.h"
#include "tools/sift/commands.h"
#include "tools/sift/predict_batch.h"
#include "tools/sift/predict_options.h"

namespace sift::cli {
namespace {

void run_predict(const PredictArgs& args) {
  if (!args.quantized_engine.empty()) use_quantized_engine(args.quantized_engine);
  PredictOutput output = predict_output(args);
  ModelBundle bundle = load_model(args.model);
  output.label_prefix = bundle.config.data.label_prefix;
  apply_threads(bundle.config.run.threads);
  const PredictSettings s =
      resolve_predict(args, bundle.task.labels.size(), bundle.config.data.multi_label,
                      bundle.config.train.threshold, bundle.config.data.max_line_bytes);
  sift::cli::TextInput in(args.input, s.max_line_bytes, bundle.config.data.label_prefix);
  TextEncoder encoder = make_encoder(bundle.task);
  torch::NoGradGuard no_grad;
  RawBatch batch;
  std::vector<std::string> texts;
  std::vector<int64_t> ids;
  auto flush = [&] {
    if (texts.empty()) return;
    const Allocating activations("a prediction batch's activations (256 lines)",
                                 "--max-line-bytes, data.max_length");
    const auto results =
        predict_batch(bundle, batch, std::vector<PredictQuery>(texts.size(), {s.k, s.threshold}));
    for (size_t i = 0; i < texts.size(); ++i) {
      std::cout << prediction_line(texts[i], results[i], output) << "\n";
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
